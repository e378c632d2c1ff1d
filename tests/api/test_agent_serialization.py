"""Per-agent serialization, as concurrent clients see it: multi-step turns never interleave, and a request that
waits past ``agent_lock_timeout_s`` gets 409 with Retry-After.

Every turn here takes two LLM calls (conversation_search with a heartbeat, then send_message), so a second turn
that started before the first one committed would be seen by the LLM without the first turn, or in the middle of
it. Each LLM request is checked against the one before it.
"""

import asyncio
import json
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.config import Settings
from memlet.db.engine import async_url
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

CLIENTS = 5
QUESTION = re.compile(r"question-(\d+)")


def make_v2_agent(http: httpx.Client) -> str:
    body = {"name": "serial", "agent_type": "memgpt_v2_agent", "model": "openai/gpt-4o-mini"}
    response = http.post("/v1/agents/", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def send(base_url: str, agent_id: str, text: str) -> httpx.Response:
    with httpx.Client(base_url=base_url, timeout=120) as own:
        body = {"messages": [{"role": "user", "content": text}]}
        return own.post(f"/v1/agents/{agent_id}/messages", json=body)


def two_step_turn() -> list[Reply]:
    """A slow first step (a tool call asking to continue), then the reply through send_message."""
    search = Reply.tool_call("conversation_search", {"query": "rivers", "request_heartbeat": True})
    return [Reply.delay(0.3, then=search), Reply.tool_call("send_message", {"message": "here is my answer"})]


def questions(message: dict[str, Any]) -> list[int]:
    return [int(n) for n in QUESTION.findall(json.dumps(message.get("content")))]


def history(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's messages after the system prompt (which is recompiled between turns)."""
    return list(request["messages"][1:])


def check_requests(requests: list[dict[str, Any]]) -> list[int]:
    """Assert that each turn's two LLM requests saw every earlier turn complete; returns the turns' order."""
    assert len(requests) == 2 * CLIENTS
    order: list[int] = []
    initial_returns = sum(m["role"] == "tool" for m in history(requests[0]))  # the agent's initial messages
    for k in range(CLIENTS):
        first, second = history(requests[2 * k]), history(requests[2 * k + 1])
        own = questions(first[-1])
        assert first[-1]["role"] == "user" and len(own) == 1, "a turn's first request ends with its own input"
        assert own[0] not in order, "each turn's input reaches the LLM once, in its own turn"
        order.append(own[0])
        seen = [n for m in first for n in questions(m) if m["role"] == "user"]
        assert seen == order, f"request {2 * k + 1} carries the earlier turns {order[:-1]} and its own input"
        returns = sum(m["role"] == "tool" for m in first) - initial_returns
        assert returns == 2 * k, "each earlier turn is complete: two tool returns"
        if k:
            previous = history(requests[2 * k - 1])
            # The previous turn's last request, then its send_message call and return, then this input.
            assert first[: len(previous)] == previous
            assert [m["role"] for m in first[len(previous) :]] == ["assistant", "tool", "user"]
        # The turn's second step: its first step's context plus the search call, its return, the heartbeat.
        assert second[: len(first)] == first
        assert [m["role"] for m in second[len(first) :]] == ["assistant", "tool", "user"]
    return order


def test_concurrent_multi_step_turns_never_interleave(
    server: LiveServer, http: httpx.Client, mock_llm: MockLLM, pg_uri: str
) -> None:
    mock_llm.reset()
    agent = make_v2_agent(http)
    start = len(http.get(f"/v1/agents/{agent}").json()["message_ids"])
    mock_llm.script(*[reply for _ in range(CLIENTS) for reply in two_step_turn()])
    with ThreadPoolExecutor(CLIENTS) as pool:
        responses = list(pool.map(lambda i: send(server.base_url, agent, f"question-{i}"), range(CLIENTS)))
    assert [r.status_code for r in responses] == [200] * CLIENTS, [r.text for r in responses]
    order = check_requests(mock_llm.requests)

    message_ids = http.get(f"/v1/agents/{agent}").json()["message_ids"]
    rows = stored_rows(pg_uri, agent)
    new = [rows[i] for i in message_ids[start:]]
    # user, search call, its return, heartbeat, send_message call, its return: six rows a turn, one run each.
    assert [row[0] for row in new] == ["user", "assistant", "tool", "user", "assistant", "tool"] * CLIENTS
    blocks = [new[6 * k : 6 * k + 6] for k in range(CLIENTS)]
    assert all(len({row[1] for row in block}) == 1 for block in blocks), "a turn's rows are contiguous"
    assert [QUESTION.findall(block[0][2]) for block in blocks] == [[str(n)] for n in order]
    sequence = sorted(message_ids[start:], key=lambda i: rows[i][3])
    assert sequence == message_ids[start:], "message_ids follow the order the rows were written"


def stored_rows(pg_uri: str, agent_id: str) -> dict[str, tuple[str, str, str, int]]:
    """The agent's rows straight from the database: id -> (role, run_id, content, sequence_id)."""

    async def run() -> dict[str, tuple[str, str, str, int]]:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.connect() as conn:
            result = await conn.execute(
                text("SELECT id, role, run_id, content::text, sequence_id FROM messages WHERE agent_id = :a"),
                {"a": agent_id},
            )
            rows = {r[0]: (r[1], r[2], r[3], r[4]) for r in result}
        await engine.dispose()
        return rows

    return asyncio.run(run())


@pytest.fixture
def impatient(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    live = LiveServer(settings.model_copy(update={"agent_lock_timeout_s": 1.0, "llm_timeout_s": 30})).start()
    try:
        yield live
    finally:
        live.stop()
        reset_database(pg_uri)


def test_a_request_waiting_past_the_lock_timeout_gets_409(impatient: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    with httpx.Client(base_url=impatient.base_url, timeout=60) as http:
        agent = make_v2_agent(http)
        mock_llm.script(Reply.delay(4.0, then=Reply.tool_call("send_message", {"message": "slow"})))
        with ThreadPoolExecutor(1) as pool:
            slow = pool.submit(send, impatient.base_url, agent, "question-0")
            deadline = time.monotonic() + 10
            while not mock_llm.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            started = time.monotonic()
            busy = send(impatient.base_url, agent, "question-1")
            waited = time.monotonic() - started
            assert slow.result().status_code == 200
    assert busy.status_code == 409, busy.text
    assert busy.headers["retry-after"] == "1"
    holder = busy.json()["run_id"]  # Letta's busy body names the run holding the agent
    assert (
        holder.startswith("run-")
        and f"Another request (run_id={holder}) is currently being processed" in (busy.json()["detail"])
    )
    assert 1.0 <= waited < 3.5  # it waited its timeout, not the whole slow turn
    assert len(mock_llm.requests) == 1  # the refused request never reached the LLM
