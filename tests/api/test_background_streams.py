"""Durable streams (issue #8 items 2-3): every streamed chunk logged with a seq_id, background runs that outlive
their request, resume by run id from any cursor (also on a second server sharing the database), Letta's 409 busy
body, and a retried request (same otids) attaching to its first run instead of starting a second turn."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.config import Settings
from memlet.db.engine import async_url
from tests.api.test_messages_api import make_agent, sse_events
from tests.conftest import LiveServer, free_port
from tests.mock_llm import MockLLM, Reply

BUSY = (
    "CONFLICT: Cannot send a new message: Another request (run_id={}) is currently being processed for this "
    "conversation. Please wait for it to complete."
)


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def body(text: str, otid: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "user", "content": text}
    if otid:
        message["otid"] = otid
    return {"messages": [message], **extra}


def chunks(text: str) -> list[Any]:
    """The decoded data of each SSE event ("[DONE]" stays a string)."""
    return [data if data == "[DONE]" else json.loads(data) for _, data in sse_events(text)]


def seq_ids(events: list[Any]) -> list[int]:
    return [e["seq_id"] for e in events if isinstance(e, dict) and "seq_id" in e]


def two_step_turn(pause: float = 1.0) -> tuple[Reply, ...]:
    """A tool call (the loop continues), then, after `pause`, the final answer."""
    return (
        Reply.tool_call("conversation_search", {"query": "rivers"}),
        Reply.delay(pause, then=Reply.text("the final answer")),
    )


def first_chunk_then_drop(base_url: str, agent_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Open a stream, read its first event, and hang up."""
    with (
        httpx.Client(base_url=base_url, timeout=30) as own,
        own.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=payload) as response,
    ):
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                return dict(json.loads(line[len("data: ") :]))
    raise AssertionError("no chunk")


def resume(http: httpx.Client, run_id: str, **params: Any) -> list[Any]:
    response = http.post(f"/v1/runs/{run_id}/stream", json=params)
    assert response.status_code == 200, response.text
    return chunks(response.text)


def wait_done(client: Letta, run_id: str) -> Any:
    deadline = time.monotonic() + 20
    while (run := client.runs.retrieve(run_id)).status in ("created", "running") and time.monotonic() < deadline:
        time.sleep(0.05)
    return run


def user_messages(client: Letta, agent_id: str) -> list[Any]:
    return [m for m in client.agents.messages.list(agent_id, limit=100).items if m.message_type == "user_message"]


class TestSeqIds:
    @pytest.mark.parametrize("background", [True, False])
    def test_only_a_background_token_stream_numbers_its_chunks(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, background: bool
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("a fairly long answer in many small tokens"))
        request = body("hi", stream_tokens=True, background=background)
        response = http.post(f"/v1/agents/{agent.id}/messages/stream", json=request)
        events = chunks(response.text)
        numbered = seq_ids(events)
        assert events[0]["message_type"] == "ping" and len(numbered) >= 4
        if background:
            assert numbered == list(range(1, len(numbered) + 1))
        else:
            assert set(numbered) == {None}  # as Letta's plain streams: only background ones are numbered
        assert [e if e == "[DONE]" else e["message_type"] for e in events[-3:]] == [
            "stop_reason",
            "usage_statistics",
            "[DONE]",
        ]


class TestBackground:
    def test_dropped_stream_completes_and_resumes_exactly_once(
        self, server: LiveServer, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(*two_step_turn())
        first = first_chunk_then_drop(server.base_url, agent.id, body("go", background=True))
        run_id, cursor = first["run_id"], first["seq_id"]
        assert first["message_type"] == "ping" and cursor == 1
        # The resume starts while the run is still in its second step: replay, then follow to the end.
        rest = list(client.runs.messages.stream(run_id, starting_after=cursor))
        assert wait_done(client, run_id).status == "completed"
        kinds = [c.message_type for c in rest]
        assert kinds[-2:] == ["stop_reason", "usage_statistics"]
        assert "tool_return_message" in kinds and "assistant_message" in kinds
        full = resume(http, run_id)
        assert full[0] == {**first, "date": full[0]["date"]} and full[-1] == "[DONE]"
        later = [e for e in full[1:] if e != "[DONE]"]
        assert [e["message_type"] for e in later] == kinds  # every later chunk, once, in order
        numbered = seq_ids(full)
        assert numbered == sorted(set(numbered)) and len(user_messages(client, agent.id)) == 1

    def test_resume_from_a_cursor_returns_exactly_the_later_chunks(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        response = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("hi", background=True))
        full = chunks(response.text)
        run_id = full[0]["run_id"]
        assert full[-1] == "[DONE]" and full == resume(http, run_id)
        for cursor in range(len(full)):
            assert resume(http, run_id, starting_after=cursor) == full[cursor:]

    def test_resume_errors_match_letta(self, http: httpx.Client, client: Letta, pg_uri: str) -> None:
        agent = make_agent(client)
        plain = chunks(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("hi")).text)
        response = http.post(f"/v1/runs/{plain[0]['run_id']}/stream", json={})
        assert response.status_code == 400
        assert response.json() == {
            "detail": "INVALID_ARGUMENT: Run was not created in background mode, so it cannot be retrieved."
        }
        assert http.post("/v1/runs/run-00000000-0000-4000-8000-000000000000/stream").status_code == 404
        old = chunks(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("x", background=True)).text)
        run_sql(pg_uri, "UPDATE runs SET created_at = now() - interval '4 hours' WHERE id = :r", r=old[0]["run_id"])
        expired = http.post(f"/v1/runs/{old[0]['run_id']}/stream", json={})
        assert expired.status_code == 410
        assert expired.json() == {"detail": "EXPIRED: Run was created more than 3 hours ago, and is now expired."}


class TestSerialization:
    def test_two_concurrent_streams_one_409_with_the_active_run(
        self, server: LiveServer, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(1.5, then=Reply.text("slow answer")), Reply.text("never"))
        barrier = threading.Barrier(2)

        def post(text: str) -> httpx.Response:
            with httpx.Client(base_url=server.base_url, timeout=30) as own:
                barrier.wait()
                return own.post(f"/v1/agents/{agent.id}/messages/stream", json=body(text))

        with ThreadPoolExecutor(2) as pool:
            responses = list(pool.map(post, ["question one", "question two"]))
        ok = [r for r in responses if r.status_code == 200]
        busy = [r for r in responses if r.status_code == 409]
        assert len(ok) == 1 and len(busy) == 1, [r.status_code for r in responses]
        run_id = chunks(ok[0].text)[0]["run_id"]
        assert busy[0].json() == {"detail": BUSY.format(run_id), "run_id": run_id}
        assert len(user_messages(client, agent.id)) == 1 and len(mock_llm.requests) == 1

    def test_same_otid_twice_is_one_turn(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("only once"))
        otid = str(uuid.uuid4())
        first = chunks(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("hi", otid, background=True)).text)
        again = chunks(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("hi", otid, background=True)).text)
        assert again == first  # the retry reads the first run's stream
        assert len(mock_llm.requests) == 1 and len(user_messages(client, agent.id)) == 1
        assert len(client.runs.list(agent_id=agent.id).items) == 1

    def test_a_retry_during_the_run_attaches_to_it(
        self, server: LiveServer, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(1.0, then=Reply.text("one turn")))
        otid = str(uuid.uuid4())
        first = first_chunk_then_drop(server.base_url, agent.id, body("hi", otid, background=True))
        retry = chunks(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body("hi", otid, background=True)).text)
        assert retry[0] == {**first, "date": retry[0]["date"]} and retry[-1] == "[DONE]"
        assert any(isinstance(e, dict) and e.get("content") == "one turn" for e in retry)
        assert len(mock_llm.requests) == 1 and len(user_messages(client, agent.id)) == 1


@pytest.fixture
def second_server(settings: Settings, server: LiveServer) -> Iterator[LiveServer]:
    """Another server process's app (its own worker, engine and turn registry) on the same database."""
    other = LiveServer(settings).start()
    try:
        yield other
    finally:
        other.stop()


def test_a_second_server_resumes_a_run_of_the_first(
    server: LiveServer, second_server: LiveServer, client: Letta, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    mock_llm.script(*two_step_turn())
    first = first_chunk_then_drop(server.base_url, agent.id, body("go", background=True))
    with httpx.Client(base_url=second_server.base_url, timeout=30) as other:
        rest = resume(other, first["run_id"], starting_after=first["seq_id"])
        assert rest[-1] == "[DONE]" and rest[-3]["message_type"] == "stop_reason"
        with httpx.Client(base_url=server.base_url, timeout=30) as own:
            assert resume(own, first["run_id"], starting_after=first["seq_id"]) == rest
    assert seq_ids(rest)[0] == 2 and wait_done(client, first["run_id"]).status == "completed"


def run_sql(uri: str, sql: str, **params: Any) -> None:
    async def run() -> None:
        engine = create_async_engine(async_url(uri))
        async with engine.begin() as conn:
            await conn.execute(text(sql), params)
        await engine.dispose()

    asyncio.run(run())


@pytest.fixture
def server_process(pg_uri: str, mock_llm: MockLLM, tmp_path: Any) -> Iterator[str]:
    """`memlet server` as a separate OS process on the same database (its own worker, engine and registry)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLET_", "LETTA_"))}
    env.update(
        MEMLET_PG_URI=pg_uri,
        MEMLET_DATA_DIR=str(tmp_path),
        OPENAI_API_KEY="sk-mock",
        OPENAI_BASE_URL=mock_llm.base_url,
        MEMLET_LOG_LEVEL="WARNING",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlet", "server", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                if httpx.get(f"{url}/v1/health/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"second server did not start: {proc.communicate(timeout=5)[0][-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except Exception:
            proc.kill()


def test_runs_resume_across_two_server_processes(
    server: LiveServer, server_process: str, client: Letta, mock_llm: MockLLM
) -> None:
    """A background run started on one process resumes from the other, in both directions, chunk for chunk."""
    agent = make_agent(client)
    for start, other in ((server.base_url, server_process), (server_process, server.base_url)):
        mock_llm.script(*two_step_turn())
        first = first_chunk_then_drop(start, agent.id, body("go", background=True))
        with httpx.Client(base_url=other, timeout=30) as elsewhere:
            rest = resume(elsewhere, first["run_id"], starting_after=first["seq_id"])
        assert rest[-1] == "[DONE]" and rest[-3]["message_type"] == "stop_reason"
        assert seq_ids(rest)[0] == first["seq_id"] + 1
        with httpx.Client(base_url=start, timeout=30) as own:
            assert resume(own, first["run_id"], starting_after=first["seq_id"]) == rest
        assert wait_done(client, first["run_id"]).status == "completed"
