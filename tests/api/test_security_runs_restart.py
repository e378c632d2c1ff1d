"""Runs survive the server stopping: `memlet server` as a subprocess, killed (SIGKILL) or stopped (SIGTERM) while a
multi-step async run waits on a slow LLM. No run stays `running`, callbacks fire, the agent answers again, and its
history has no tool call without its return."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from memlet import ids
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from memlet.db.engine import async_url
from tests.conftest import LiveServer, free_port, reset_database
from tests.mock_llm import MockLLM, Reply

GRACE_S = 3


class Callbacks:
    """A receiver for run callbacks: every POSTed JSON body, in arrival order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/done"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def for_run(self, run_id: str) -> list[dict[str, Any]]:
        return [b for b in self.bodies if b["run_id"] == run_id]


class Server:
    """`memlet server` in a subprocess on its own database, the LLM being the test's mock."""

    def __init__(self, pg_uri: str, mock: MockLLM, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLET_", "LETTA_", "OPENAI_"))}
        env.update(
            MEMLET_PG_URI=pg_uri,
            OPENAI_API_KEY="sk-mock",
            OPENAI_BASE_URL=mock.base_url,
            MEMLET_SHUTDOWN_GRACE_S=str(GRACE_S),
            MEMLET_LLM_TIMEOUT_S="60",
            MEMLET_ALLOWED_HOSTS="127.0.0.1",  # the callback receiver is on loopback
            MEMLET_LOG_LEVEL="WARNING",
        )
        self.log = log.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memlet", "server", "--port", str(self.port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/health/", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.proc.kill()
        raise AssertionError(f"server did not start: {log.read_text()[-3000:]}")

    def stop(self, sig: int) -> float:
        """Send `sig` and wait for the process to end; returns how long that took."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        self.proc.wait(timeout=60)
        self.log.close()
        return time.monotonic() - started


@pytest.fixture
def fresh_db(embedded_pg: EmbeddedPostgres, pg_uri: str) -> Iterator[str]:
    name = f"memlet_restart_{ids.new_id(ids.Prefix.RUN)[-12:]}"
    embedded_pg.psql(f'CREATE DATABASE "{name}";')
    yield make_url(pg_uri).set(database=name).render_as_string(hide_password=False)
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')


@pytest.fixture
def callbacks() -> Iterator[Callbacks]:
    receiver = Callbacks()
    yield receiver
    receiver.server.shutdown()


def make_agent(url: str) -> str:
    body = {"name": "durable", "agent_type": "letta_v1_agent", "model": "openai/gpt-4o-mini"}
    response = httpx.post(f"{url}/v1/agents/", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def start_async_run(url: str, agent_id: str, callback_url: str, text: str) -> str:
    body = {"messages": [{"role": "user", "content": text}], "callback_url": callback_url}
    response = httpx.post(f"{url}/v1/agents/{agent_id}/messages/async", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def wait_until(condition: Any, what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def multi_step_then_stall(mock: MockLLM) -> None:
    """Step 1 calls a tool (committed with its return); step 2 waits on the LLM far longer than the test."""
    mock.script(
        Reply.tool_call("conversation_search", {"query": "rivers"}),
        Reply.delay(120, then=Reply.text("too late")),
    )


def run(url: str, run_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/v1/runs/{run_id}", timeout=30).json())


def active_runs(url: str) -> list[str]:
    return [r["id"] for r in httpx.get(f"{url}/v1/runs/active", timeout=30).json()]


def assert_answers_and_history_is_whole(url: str, agent_id: str, mock: MockLLM) -> None:
    """The next message is answered normally, and every tool call in context has its return."""
    mock.script(Reply.text("back again"))
    body = {"messages": [{"role": "user", "content": "are you there?"}]}
    response = httpx.post(f"{url}/v1/agents/{agent_id}/messages", json=body, timeout=60)
    assert response.status_code == 200, response.text
    sent = mock.requests[-1]["messages"]
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    returns = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert calls and sorted(calls) == sorted(returns)


def assert_interrupted(record: dict[str, Any]) -> None:
    assert record["status"] == "failed"
    assert record["stop_reason"] == "error"
    error = record["metadata"]["error"]  # the error message its stream ends with, which Letta Code reads
    assert (error["message_type"], error["error_type"], error["run_id"]) == (
        "error_message",
        "internal_error",
        record["id"],
    )
    assert "before the run finished" in error["detail"]


def test_sigkill_mid_step_then_restart(fresh_db: str, mock_llm: MockLLM, callbacks: Callbacks, tmp_path: Path) -> None:
    mock_llm.reset()
    first = Server(fresh_db, mock_llm, tmp_path / "server.log")
    agent = make_agent(first.url)
    multi_step_then_stall(mock_llm)
    run_id = start_async_run(first.url, agent, callbacks.url, "look something up")
    wait_until(lambda: len(mock_llm.requests) == 2, "the run's second step to reach the LLM")
    assert run(first.url, run_id)["status"] == "running"
    first.stop(signal.SIGKILL)

    second = Server(fresh_db, mock_llm, tmp_path / "server.log")
    try:
        record = run(second.url, run_id)
        assert_interrupted(record)
        assert run_id not in active_runs(second.url)
        wait_until(lambda: callbacks.for_run(run_id), "the run's callback")
        assert [c["status"] for c in callbacks.for_run(run_id)] == ["failed"]
        assert_answers_and_history_is_whole(second.url, agent, mock_llm)
    finally:
        second.stop(signal.SIGTERM)


def test_sigterm_waits_for_runs_then_fails_the_rest(
    fresh_db: str, mock_llm: MockLLM, callbacks: Callbacks, tmp_path: Path
) -> None:
    mock_llm.reset()
    server = Server(fresh_db, mock_llm, tmp_path / "server.log")
    slow_agent, quick_agent = make_agent(server.url), make_agent(server.url)
    multi_step_then_stall(mock_llm)
    slow = start_async_run(server.url, slow_agent, callbacks.url, "look something up")
    wait_until(lambda: len(mock_llm.requests) == 2, "the slow run's second step to reach the LLM")
    mock_llm.script(Reply.delay(1.0, then=Reply.text("just in time")))
    quick = start_async_run(server.url, quick_agent, callbacks.url, "quick one")
    wait_until(lambda: len(mock_llm.requests) == 3, "the quick run to reach the LLM")

    took = server.stop(signal.SIGTERM)
    print(f"\nSIGTERM with 2 runs in flight (grace {GRACE_S} s): the server exited in {took:.1f} s")
    assert GRACE_S - 0.5 < took < GRACE_S + 10
    # Both callbacks were sent before the process ended.
    assert [c["status"] for c in callbacks.for_run(quick)] == ["completed"]
    assert [c["status"] for c in callbacks.for_run(slow)] == ["failed"]

    again = Server(fresh_db, mock_llm, tmp_path / "server.log")
    try:
        assert run(again.url, quick)["status"] == "completed"
        assert_interrupted(run(again.url, slow))
        assert active_runs(again.url) == []
        assert len(callbacks.for_run(slow)) == 1  # closed once, by the server that stopped
        assert_answers_and_history_is_whole(again.url, slow_agent, mock_llm)
    finally:
        again.stop(signal.SIGTERM)


def insert_run(pg_uri: str, agent_id: str, worker_id: str) -> str:
    """A running run leased (for a minute) to a worker that is not alive."""
    run_id = ids.new_id(ids.Prefix.RUN)

    async def run() -> None:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO runs (id, agent_id, organization_id, status, num_steps, worker_id, lease_expires_at) "
                    "SELECT :id, id, organization_id, 'running', 0, :worker, now() + interval '1 minute' "
                    "FROM agents WHERE id = :agent"
                ),
                {"id": run_id, "agent": agent_id, "worker": worker_id},
            )
        await engine.dispose()

    asyncio.run(run())
    return run_id


def test_a_running_server_sweeps_runs_of_dead_workers(settings: Settings, pg_uri: str) -> None:
    live = LiveServer(settings.model_copy(update={"run_lease_s": 0.6})).start()
    try:
        agent = make_agent(live.base_url)
        run_id = insert_run(pg_uri, agent, "worker-that-died")  # inserted running; the sweep may close it at once
        wait_until(lambda: run(live.base_url, run_id)["status"] != "running", "the periodic sweep", timeout_s=5)
        assert_interrupted(run(live.base_url, run_id))
    finally:
        live.stop()
        reset_database(pg_uri)
