"""Async runs POST their outcome to ``callback_url`` when they finish, and record how that went on the run."""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import free_port, start_server
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

# The receivers listen on loopback, which the outbound URL policy refuses: this module's server allows exactly
# these two ports (one with a receiver, one where nothing listens).
RECEIVER_PORT = free_port()
CLOSED_PORT = free_port()

BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


class Receiver:
    """A tiny HTTP server on 127.0.0.1 that records every POST and answers with ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                owner.received.append(({k.lower(): v for k, v in self.headers.items()}, json.loads(body)))
                self.send_response(owner.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", RECEIVER_PORT), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def allowing_server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    allowed = f"127.0.0.1:{RECEIVER_PORT},127.0.0.1:{CLOSED_PORT}"
    with start_server(settings, pg_uri, allowed_hosts=allowed) as server:
        yield server


@pytest.fixture
def server(allowing_server: LiveServer, pg_uri: str) -> Iterator[LiveServer]:
    yield allowing_server
    reset_database(pg_uri)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def closed_port_url() -> str:
    # A free port nobody listens on when the run calls back (allowed by this module's server).
    return f"http://127.0.0.1:{CLOSED_PORT}/hook"


def send_async(http: httpx.Client, client: Letta, callback_url: str) -> dict[str, Any]:
    agent = client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", memory_blocks=BLOCKS
    )  # type: ignore[arg-type]
    response = http.post(
        f"/v1/agents/{agent.id}/messages/async",
        json={"messages": [{"role": "user", "content": "hello"}], "callback_url": callback_url},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_for_callback(http: httpx.Client, run_id: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = dict(http.get(f"/v1/runs/{run_id}").json())
        if run["callback_sent_at"] is not None:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never recorded its callback")


def test_callback_posts_the_finished_run(
    http: httpx.Client, client: Letta, mock_llm: MockLLM, receiver: Receiver
) -> None:
    mock_llm.script(Reply.text("Hi Bob!"))
    created = send_async(http, client, receiver.url)
    assert created["callback_url"] == receiver.url and created["callback_sent_at"] is None

    run = wait_for_callback(http, created["id"])
    assert run["status"] == "completed"
    assert run["callback_status_code"] == 200 and run["callback_error"] is None

    assert len(receiver.received) == 1
    headers, payload = receiver.received[0]
    assert headers["content-type"] == "application/json"
    assert set(payload) == {"run_id", "status", "completed_at", "metadata"}
    assert payload["run_id"] == created["id"] and payload["status"] == "completed"
    assert payload["completed_at"] and "+" not in payload["completed_at"]
    metadata = payload["metadata"]
    assert metadata["run_type"] == "send_message_async" and metadata["lettuce"] is False
    result = metadata["result"]
    assert result["stop_reason"] == {"message_type": "stop_reason", "stop_reason": "end_turn"}
    assert result["usage"]["message_type"] == "usage_statistics" and result["usage"]["step_count"] == 1
    types = [m["message_type"] for m in result["messages"]]
    assert "user_message" in types and "assistant_message" in types
    reply = next(m for m in result["messages"] if m["message_type"] == "assistant_message")
    assert reply["content"] == "Hi Bob!" and reply["run_id"] == created["id"]


def test_non_2xx_status_is_recorded_without_error(
    http: httpx.Client, client: Letta, mock_llm: MockLLM, receiver: Receiver
) -> None:
    receiver.status = 500
    mock_llm.script(Reply.text("ok"))
    run = wait_for_callback(http, send_async(http, client, receiver.url)["id"])
    assert run["status"] == "completed"
    assert run["callback_status_code"] == 500 and run["callback_error"] is None
    assert len(receiver.received) == 1


def test_receiver_down_records_error_and_run_still_completes(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    url = closed_port_url()
    mock_llm.script(Reply.text("ok"))
    created = send_async(http, client, url)
    run = wait_for_callback(http, created["id"])
    assert run["status"] == "completed" and run["stop_reason"] == "end_turn"
    assert run["callback_status_code"] is None
    # One generic sentence, never the connection error (it would tell what listens where).
    expected = f"Failed to dispatch callback for run {created['id']} to {url}: the callback could not be delivered"
    assert run["callback_error"] == expected


def test_failed_run_calls_back_with_failed_status(
    http: httpx.Client, client: Letta, mock_llm: MockLLM, receiver: Receiver
) -> None:
    mock_llm.script(Reply.error(400, times=10))
    created = send_async(http, client, receiver.url)
    run = wait_for_callback(http, created["id"])
    assert run["status"] == "failed" and run["callback_status_code"] == 200
    _, payload = receiver.received[0]
    assert payload["status"] == "failed"
    assert payload["metadata"]["result"]["stop_reason"]["stop_reason"] == run["stop_reason"]


def test_a_cancelled_run_calls_back_once_with_cancelled_status(
    http: httpx.Client, client: Letta, mock_llm: MockLLM, receiver: Receiver
) -> None:
    # Letta's test_run_callback_only_on_terminal_status: one callback, when the run reaches a terminal status;
    # a cancel is one (Letta's cancel dispatches it).
    mock_llm.script(Reply.delay(5, Reply.text("too late")))
    created = send_async(http, client, receiver.url)
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert receiver.received == []
    cancelled = http.post(f"/v1/agents/{created['agent_id']}/messages/cancel", json={"run_ids": [created["id"]]})
    assert cancelled.json() == {created["id"]: "cancelled"}
    run = wait_for_callback(http, created["id"])
    assert (run["status"], run["stop_reason"], run["callback_status_code"]) == ("cancelled", "cancelled", 200)
    time.sleep(1.0)
    assert [payload["status"] for _, payload in receiver.received] == ["cancelled"]
    assert receiver.received[0][1]["run_id"] == created["id"]
