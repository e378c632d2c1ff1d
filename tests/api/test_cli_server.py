"""`memlet server` as a user runs it: embedded Postgres, health within seconds, clean Ctrl-C, data kept on restart."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port


def postgres_pids(pgdata: Path) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "postgres" in line and str(pgdata) in line]


class Server:
    def __init__(self, data_dir: Path, port: int) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLET_", "LETTA_"))}
        env.update(MEMLET_DATA_DIR=str(data_dir), OPENAI_API_KEY="sk-none", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
        self.url = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memlet", "server", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        while time.monotonic() - started < 60:
            try:
                if httpx.get(f"{self.url}/v1/health/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            self.proc.kill()
            raise AssertionError(f"server did not answer: {self.proc.communicate()[0]}")
        self.startup_s = time.monotonic() - started

    def interrupt(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        output, _ = self.proc.communicate(timeout=30)
        return output


@pytest.fixture
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = Path(tmp_path_factory.mktemp("memlet-home"))
    yield path
    for pid in postgres_pids(path):
        os.kill(pid, signal.SIGKILL)


def test_start_ctrl_c_restart_keeps_data(data_dir: Path) -> None:
    port = free_port()
    cold = Server(data_dir, port)
    agent = httpx.post(
        f"{cold.url}/v1/agents/",
        json={
            "name": "durable",
            "llm_config": {
                "model": "m",
                "model_endpoint_type": "openai",
                "model_endpoint": "http://127.0.0.1:9/v1",
                "context_window": 8000,
            },
        },
        timeout=30,
    )
    assert agent.status_code == 200, agent.text
    output = cold.interrupt()
    assert "embedded PostgreSQL stopped" in output
    assert str(data_dir) in output  # it says where the data lives
    assert postgres_pids(data_dir) == []  # Ctrl-C leaves no Postgres behind

    warm = Server(data_dir, port)
    try:
        assert warm.startup_s < 10
        names = [a["name"] for a in httpx.get(f"{warm.url}/v1/agents/").json()]
        assert names == ["durable"]
    finally:
        warm.interrupt()
    assert postgres_pids(data_dir) == []
