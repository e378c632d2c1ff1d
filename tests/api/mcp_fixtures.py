"""Fixtures for the MCP tests: a memlet server with stdio on, 127.0.0.1 allowed, short MCP deadlines and an
encryption key; and the demo MCP server (`tests/mcp_servers/demo_server.py`) over streamable HTTP and SSE."""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from tests.api.listener import start_server
from tests.conftest import LiveServer, free_port, reset_database

DEMO = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py")
CALL_TIMEOUT_S = 3.0
ENCRYPTION_KEY = Fernet.generate_key().decode()
DEMO_TOOLS = {
    "echo",
    "add",
    "multiply",
    "reverse_string",
    "create_person",
    "manage_tasks",
    "search_with_filters",
    "process_nested_data",
    "slow_tool",
}


def stdio_config(*extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"mcp_server_type": "stdio", "command": sys.executable, "args": [DEMO, "stdio", *extra], "env": env}


@dataclass
class HttpDemo:
    streamable_http: str
    sse: str


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("demo MCP server exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("demo MCP server did not start")


@pytest.fixture(scope="session")
def http_demo() -> Iterator[HttpDemo]:
    ports = {"streamable-http": free_port(), "sse": free_port()}
    processes = {
        kind: subprocess.Popen(
            [sys.executable, DEMO, kind, str(port), "--extras"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for kind, port in ports.items()
    }
    try:
        for kind, port in ports.items():
            _wait_for_port(port, processes[kind])
        yield HttpDemo(
            streamable_http=f"http://127.0.0.1:{ports['streamable-http']}/mcp",
            sse=f"http://127.0.0.1:{ports['sse']}/sse",
        )
    finally:
        for process in processes.values():
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def mcp_server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    overrides = {
        "mcp_stdio": True,
        "allowed_hosts": "127.0.0.1",
        "mcp_call_timeout_s": CALL_TIMEOUT_S,
        "mcp_connect_timeout_s": 20.0,
        "encryption_key": SecretStr(ENCRYPTION_KEY),
    }
    with start_server(settings, pg_uri, **overrides) as server:
        yield server


@pytest.fixture
def mcp_client(mcp_server: LiveServer, pg_uri: str) -> Iterator[Letta]:
    yield Letta(base_url=mcp_server.base_url, max_retries=0, timeout=60)
    reset_database(pg_uri)


@pytest.fixture
def mcp_http(mcp_server: LiveServer, mcp_client: Letta) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mcp_server.base_url, timeout=60) as client:
        yield client
