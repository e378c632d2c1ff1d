"""Shared bench plumbing: an embedded Postgres, the project's mock LLM and memlet, each in its own process.

Timings come from a real ``memlet server`` process (as a user runs it) talking to a separate mock LLM process, so
the client, the server and the mock never share a GIL. SQL statement counts need the engine, so ``in_process``
serves the app in this process instead (used by ``trace_sql.py``, whose numbers are counts, not times).
"""

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from memlet import migrations
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from tests.conftest import LiveServer, free_port
from tests.mock_llm import MockLLM

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class SqlCounter:
    """Counts statements sent to Postgres (one round trip each) while a request runs."""

    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, *_: object) -> None:
        with self.lock:
            self.count += 1


@dataclass
class Bench:
    base_url: str
    server_pid: int
    pg_uri: str = ""
    pg_data: Path | None = None
    mock_url: str = ""  # the mock LLM's http://host:port/v1 (for tests.mock_llm.script_remote)
    mock_pid: int = 0

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU seconds used so far by the memlet server process and by the embedded Postgres."""
        return process_cpu_s(self.server_pid), postgres_cpu_s(self.pg_data) if self.pg_data else 0.0


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(utime+stime, cutime+cstime, ppid) in clock ticks, or None for a process that is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14]), int(rest[1])


def _run_ns(pid: int) -> int | None:
    """Nanoseconds on CPU of every live thread of `pid` (the scheduler's own count, `/proc/<pid>/task/*/schedstat`:
    exact, where `stat` counts 10 ms ticks), or None when it is not available."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total
    except (OSError, ValueError, IndexError):
        return None


def process_cpu_s(pid: int) -> float:
    ran = _run_ns(pid)
    if ran is not None:
        return ran / 1e9
    stat = _stat(pid)
    return stat[0] / os.sysconf("SC_CLK_TCK") if stat else 0.0


def postgres_cpu_s(pg_data: Path) -> float:
    """CPU seconds of the Postgres under `pg_data`: the postmaster, its reaped children (ticks) and its live
    backends (exact where the scheduler's count is available)."""
    postmaster = int((pg_data / "postmaster.pid").read_text().split()[0])
    own = _stat(postmaster)
    if own is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    seconds = own[1] / tick + process_cpu_s(postmaster)
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (child := _stat(int(entry))) is not None and child[2] == postmaster:
            seconds += process_cpu_s(int(entry))
    return seconds


def wait_healthy(url: str, proc: subprocess.Popen[bytes] | None = None, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited with {proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not become healthy")


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    """Wait until something accepts connections on 127.0.0.1:`port`; raise if `proc` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"port {port}: process exited with {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


@contextmanager
def _database() -> Iterator[tuple[str, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        pg_data = Path(tmp) / "pgdata"
        pg = EmbeddedPostgres(pg_data, database="memlet_bench")
        uri = pg.start()
        try:
            asyncio.run(migrations.upgrade(uri))
            yield uri, pg_data
        finally:
            pg.stop()


def stop(*procs: subprocess.Popen[bytes], timeout_s: float = 20) -> None:
    """SIGINT (a graceful shutdown) to each process, then SIGKILL to one that has not exited in `timeout_s`."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def mock_llm_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The project's mock LLM in a process of its own, answering: (its http://127.0.0.1:<port>/v1, the process)."""
    port = free_port()
    mock = subprocess.Popen([sys.executable, "-m", "tests.mock_llm", "--port", str(port)], cwd=ROOT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/v1/models", mock)
        yield f"http://127.0.0.1:{port}/v1", mock
    finally:
        stop(mock)


@contextmanager
def bench_server(workers: int = 1) -> Iterator[Bench]:
    """memlet (`workers` processes) and the mock LLM as separate processes on one embedded Postgres, which memlet
    reaches through MEMLET_PG_URI as it would an external one."""
    with _database() as (uri, pg_data), mock_llm_process() as (mock_url, mock):
        port = free_port()
        env = {
            **os.environ,
            "MEMLET_PG_URI": uri,
            "MEMLET_MIGRATE_ON_START": "false",
            "MEMLET_LOG_LEVEL": "WARNING",
            "OPENAI_API_KEY": "sk-mock",
            "OPENAI_BASE_URL": mock_url,
        }
        # MEMLET_BENCH_PROFILE=<file>: run the server under a CPU-time cProfile, its stats written to <file> at the end.
        profile = os.environ.get("MEMLET_BENCH_PROFILE")
        memlet = [str(ROOT / "bench" / "cpu_profile.py"), profile] if profile else ["-m", "memlet"]
        command = [sys.executable, *memlet, "server", "--port", str(port), "--workers", str(workers)]
        server = subprocess.Popen(command, cwd=ROOT, env=env)
        try:
            wait_healthy(f"http://127.0.0.1:{port}/v1/health/", server)
            yield Bench(f"http://127.0.0.1:{port}", server.pid, uri, pg_data, mock_url, mock.pid)
        finally:
            stop(server)


@contextmanager
def in_process() -> Iterator[tuple[LiveServer, SqlCounter]]:
    """The app served in this process, with a statement counter on its engine (for counts, not timings)."""
    from sqlalchemy import event

    with _database() as (uri, _):
        mock = MockLLM.start()
        try:
            settings = Settings(
                _env_file=None,
                pg_uri=uri,
                openai_api_key="sk-mock",  # type: ignore[call-arg]
                openai_base_url=mock.base_url,
                log_level="WARNING",
            )
            server = LiveServer(settings).start()
            server.server.config.app.state.mock_llm = mock  # type: ignore[attr-defined]
            counter = SqlCounter()
            state = server.server.config.app.state  # type: ignore[attr-defined]
            for engine in (state.engine, state.turn_engine):
                event.listen(engine.sync_engine, "before_cursor_execute", counter)
            try:
                yield server, counter
            finally:
                server.stop()
        finally:
            mock.stop()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
    return f"{name:<44} n={len(ms):<5} p50={q[49]:8.2f} ms  p99={q[98]:8.2f} ms"
