"""What a tool can and cannot reach from inside the sandbox, probed by real tools (see also the API tests in
tests/api/test_security_tool_isolation.py). Bubblewrap must work here: these tests fail, not skip, without it."""

import asyncio
import itertools
import logging
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from memlet.config import Settings
from memlet.tool_exec.isolation import (
    Isolation,
    check_bubblewrap,
    drops_to_own_uid,
    probe_bubblewrap,
    sandbox_argv,
)
from memlet.tool_exec.sandbox import SandboxPolicy, run_tool
from memlet.tool_exec.status import sandbox_status
from tests.unit.test_sandbox import processes_with

CONNECT = '''
import socket

def connect(port: int) -> str:
    """Open a TCP connection to 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
    except OSError as exc:
        return type(exc).__name__
    return "connected"
'''

PROBE_PARENT = '''
import os

def probe(pid: int, secret: str) -> dict:
    """Look for the server's secret: own environment, the server's /proc entry, every visible process."""
    try:
        parent = "secret" if secret in open(f"/proc/{pid}/environ").read() else "readable"
    except OSError as exc:
        parent = type(exc).__name__
    leaking = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if secret in open(f"/proc/{entry}/environ").read():
                    leaking.append(int(entry))
            except OSError:
                pass
    return {"env": sorted(os.environ), "parent": parent, "leaking": leaking, "uid": os.getuid()}
'''

SLEEP_TOOL = (
    "import time\ndef f(s: float):\n    start = time.time()\n    time.sleep(s)\n    return [start, time.time()]\n"
)


def test_bubblewrap_is_available() -> None:
    # CI installs bubblewrap (.ci/run); without it every isolation claim below is void, so this fails loudly.
    bwrap, reason = probe_bubblewrap()
    assert reason is None
    assert bwrap is not None


class TestNetwork:
    @pytest.fixture
    def listener(self) -> "socket.socket":
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server
        server.close()

    async def test_network_off_blocks_connect(self, listener: socket.socket) -> None:
        port = listener.getsockname()[1]
        result = await run_tool(CONNECT, "connect", {"port": port}, policy=SandboxPolicy(network=False))
        assert (result.status, result.func_return) == ("success", "ConnectionRefusedError")

    async def test_network_on_by_default(self, listener: socket.socket) -> None:
        port = listener.getsockname()[1]
        result = await run_tool(CONNECT, "connect", {"port": port})
        assert (result.status, result.func_return) == ("success", "connected")


class TestServerSecrets:
    async def test_tool_sees_no_server_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        secret = f"sk-unit-{uuid.uuid4().hex}"
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        result = await run_tool(PROBE_PARENT, "probe", {"pid": os.getpid(), "secret": secret})
        assert result.status == "success"
        assert result.value == {
            "env": [
                *("HOME", "LANG", "LC_ALL", "NO_COLOR", "PATH", "PWD", "PYTHONUNBUFFERED", "PYTHONWARNINGS"),
                *("TERM", "TMPDIR"),
            ],
            "parent": "FileNotFoundError",  # the server's pid does not exist in the tool's pid namespace
            "leaking": [],
            "uid": result.value["uid"],
        }
        if os.geteuid() == 0:
            assert result.value["uid"] >= SandboxPolicy().uid_base


def _prefix_top_dirs() -> set[str]:
    """The first directory of each interpreter prefix, as the sandbox binds it (e.g. "work" for /work/x/.venv)."""
    prefixes = {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    return {Path(p).parts[1] for p in prefixes if len(Path(p).parts) > 1}


class TestNamespaces:
    async def test_own_namespaces_and_read_only_system(self) -> None:
        source = (
            "import errno, os, socket\n"
            "def f(kinds):\n"
            "    try:\n"
            "        open('/usr/pwned', 'w')\n"
            "        usr = 'writable'\n"
            "    except OSError as exc:\n"
            "        usr = errno.errorcode[exc.errno]\n"
            "    return {\n"
            "        'ns': {k: os.readlink(f'/proc/self/ns/{k}') for k in kinds},\n"
            "        'hostname': socket.gethostname(),\n"
            "        'usr': usr,\n"
            "        'root': sorted(os.listdir('/')),\n"
            "        'tmp_mode': oct(os.stat('/tmp').st_mode & 0o7777),\n"
            "    }\n"
        )
        kinds = ["pid", "mnt", "ipc", "uts"]
        result = await run_tool(source, "f", {"kinds": kinds})
        assert result.status == "success"
        inside = result.value
        for kind in kinds:
            assert inside["ns"][kind] != os.readlink(f"/proc/self/ns/{kind}"), kind
        assert inside["hostname"] == "sandbox"
        assert inside["usr"] == "EROFS"
        # Only what Python needs: the system directories plus the top directory of each interpreter prefix (the
        # checkout's virtualenv lives wherever CI cloned it: /work, /check, /tmp, a home directory).
        system = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "tmp", "usr"}
        assert set(inside["root"]) <= system | _prefix_top_dirs()
        assert not {"var", "srv", "sys", "boot", "mnt", "media"} & set(inside["root"])
        assert inside["tmp_mode"] == "0o1777"


class TestHiddenPaths:
    @pytest.fixture
    def dir_in_venv(self) -> "Path":
        # A data dir placed inside a prefix the sandbox mounts (here the virtualenv) must still be invisible.
        path = Path(tempfile.mkdtemp(prefix="memlet-hidden-", dir=sys.prefix))
        path.chmod(0o755)  # readable by the tool's uid, were it visible
        (path / "secret.txt").write_text("s3cret")
        yield path
        shutil.rmtree(path, ignore_errors=True)

    async def test_hidden_dir_under_a_mounted_prefix_is_empty(self, dir_in_venv: Path) -> None:
        source = "import os\ndef f(path):\n    return sorted(os.listdir(path))\n"
        mounted = await run_tool(source, "f", {"path": str(dir_in_venv)})
        hidden = await run_tool(
            source, "f", {"path": str(dir_in_venv)}, policy=SandboxPolicy(hidden=(str(dir_in_venv),))
        )
        assert (mounted.value, hidden.value) == (["secret.txt"], [])

    def test_settings_hide_the_data_dir_and_the_database_socket(self, tmp_path: Path) -> None:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            data_dir=tmp_path,
            pg_uri="postgresql://postgres:pw@/memlet?host=/run/memlet-pg",
        )
        assert SandboxPolicy.from_settings(settings).hidden == (str(tmp_path), "/run/memlet-pg")


class TestConcurrency:
    async def test_at_most_max_concurrent_sandboxes(self) -> None:
        policy = SandboxPolicy(max_concurrent=2)
        results = await asyncio.gather(*(run_tool(SLEEP_TOOL, "f", {"s": 1.0}, policy=policy) for _ in range(4)))
        spans = [r.value for r in results]
        assert all(r.status == "success" for r in results)
        overlap = max(sum(1 for s in spans if s[0] <= t < s[1]) for t, _ in spans)
        assert overlap == 2

    async def test_waiting_for_a_slot_is_bounded_by_the_timeout(self) -> None:
        policy = SandboxPolicy(max_concurrent=1)
        busy = asyncio.create_task(run_tool(SLEEP_TOOL, "f", {"s": 3.0}, policy=policy, timeout_s=10))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        waiting = await run_tool(SLEEP_TOOL, "f", {"s": 0.0}, policy=policy, timeout_s=1.0)
        assert time.monotonic() - started < 2.5
        assert waiting.func_return == (
            "Error executing function f: TimeoutError: no sandbox became free within 1 seconds (MEMLET_MAX_CONCURRENT_TOOLS=1)"
        )
        assert (await busy).status == "success"


class TestWithoutIsolation:
    """MEMLET_TOOL_ISOLATION=none (or no bubblewrap): limits, clean env, uid drop and the final kill still apply."""

    policy = SandboxPolicy(isolation="none", disk_mb=4)

    async def test_file_size_limit(self) -> None:
        source = "def f():\n    with open('big', 'wb') as out:\n        out.write(b'x' * (8 * 1024 * 1024))\n"
        result = await run_tool(source, "f", {}, policy=self.policy)
        assert result.func_return == "Error executing function f: OSError: [Errno 27] File too large"

    @pytest.mark.skipif(
        not drops_to_own_uid(Isolation("none")),
        reason="without isolation only a root server whose Python is world-readable gives tools a uid of their own",
    )
    async def test_setsid_child_of_own_uid_killed(self) -> None:
        marker = f"memlet-none-{uuid.uuid4().hex}"
        source = (
            "import os, subprocess, sys\n"
            "def f(marker):\n"
            "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', marker], start_new_session=True)\n"
            "    return os.getuid()\n"
        )
        result = await run_tool(source, "f", {"marker": marker}, policy=self.policy)
        assert result.status == "success"
        assert result.value >= self.policy.uid_base
        assert processes_with(marker) == []


class TestProbe:
    def test_missing_bwrap_is_reported(self) -> None:
        assert check_bubblewrap(None) == (None, "bubblewrap (bwrap) is not installed")

    def test_broken_bwrap_is_reported(self) -> None:
        bwrap, reason = check_bubblewrap("/bin/false")
        assert bwrap is None
        assert (reason or "").startswith("bwrap cannot create the sandbox here (exit 1")

    async def test_start_without_isolation_warns_loudly(self) -> None:
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("memlet.tool_exec")
        logger.addHandler(handler)
        try:
            settings = Settings(_env_file=None, tool_isolation="none", tool_network=False)  # type: ignore[call-arg]
            status = await sandbox_status(settings)
        finally:
            logger.removeHandler(handler)
        assert status["isolation"] == "none"
        assert status["reason"] == "disabled by MEMLET_TOOL_ISOLATION=none"
        assert status["network_enforced"] is False
        events = [getattr(r, "fields", {}).get("event") for r in records if r.levelno == logging.WARNING]
        assert events == ["tool_isolation_unavailable", "tool_network_not_enforced"]


def test_an_installation_under_tmp_stays_visible() -> None:
    """A checkout (and its venv) under /tmp, as CI's may be, is bound on top of the private /tmp, not hidden by it."""
    argv = sandbox_argv(shutil.which("bwrap") or "bwrap", network=True, disk_mb=1, hidden=())
    mounts = [(argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i] in ("--tmpfs", "--ro-bind")]
    private_tmp = mounts.index(("--tmpfs", "/tmp"))
    prefix = os.path.realpath(sys.prefix)
    assert mounts.index(("--ro-bind", prefix)) > private_tmp
    assert ("--dir", "/tmp") not in list(itertools.pairwise(argv))  # /tmp keeps its 1777 mode
