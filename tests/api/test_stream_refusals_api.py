"""What a client sees when a streamed send is refused before its first step, as Letta 0.16.8 answers it.

Letta's stream service wraps the agent loop in a stream that turns whatever the loop raises into SSE, so a refusal
the loop finds (a pending approval, approval answers that match no pending request) is an HTTP 200 stream whatever
`include_pings`, `background` or `stream_tokens` say: the initial ping (with pings), `stop_reason: error`, an
`event: error` naming it (`internal_error`; the text of Letta's own errors as `message`, a plain ValueError's
generic "unknown error" message, the text always in `detail`), then `[DONE]`. letta-client raises it while
reading, as an `APIStatusError` with status 200. Only what Letta checks before the response starts is an HTTP
error: an unknown agent or conversation (404), a busy conversation (409, pinned in test_background_streams.py).
"""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from letta_client import APIStatusError, ConflictError, Letta

from tests.api.test_messages_api import sse_events
from tests.mock_llm import MockLLM, Reply

MULTIPLY = '''def multiply(a: int, b: int) -> str:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return "product=" + str(a * b)
'''
PENDING = (
    "CONFLICT: Cannot send a new message: The agent is waiting for approval on a tool call. Please approve or deny "
    "the pending request before continuing."
)
UNKNOWN = "An unknown error occurred with the LLM streaming request."
NO_PENDING = (
    "Cannot process approval response: No tool call is currently awaiting approval. Please send a regular message "
    "to interact with the agent."
)
USER = [{"role": "user", "content": "hello again"}]
MISSING_AGENT = "agent-00000000-0000-4000-8000-000000000000"
MISSING_CONV = "conv-00000000-0000-4000-8000-000000000000"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def answer(call_id: str) -> list[dict[str, Any]]:
    return [{"type": "approval", "approvals": [{"type": "approval", "tool_call_id": call_id, "approve": True}]}]


def blocked(client: Letta, mock_llm: MockLLM) -> tuple[str, str]:
    """An agent and a conversation of it, each stopped on an approval (calls `call_a` and `call_c`)."""
    tool = client.tools.create(source_code=MULTIPLY, default_requires_approval=True)
    agent = client.agents.create(
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        tool_ids=[tool.id],
        memory_blocks=[{"label": "persona", "value": "I am a bot."}],
    )
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(
        Reply.tool_call("multiply", {"a": 6, "b": 7}, id="call_a"),
        Reply.tool_call("multiply", {"a": 6, "b": 7}, id="call_c"),
    )
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "multiply"}])
    client.conversations.messages.create(conv.id, messages=[{"role": "user", "content": "multiply"}], streaming=False)
    return agent.id, conv.id


def stream_url(route: str, agent_id: str, conv_id: str) -> str:
    return f"/v1/agents/{agent_id}/messages/stream" if route == "agent" else f"/v1/conversations/{conv_id}/messages"


def refused_tail(response: httpx.Response, *, pings: bool) -> dict[str, Any]:
    """Checks the stream's shape and returns its error event's data."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    if pings:
        assert '"message_type":"ping"' in events[0][1]
        events = events[1:]
    assert [name for name, _ in events] == [None, "error", None]
    assert events[0][1] == '{"message_type":"stop_reason","stop_reason":"error"}'
    assert events[2][1] == "[DONE]"
    error: dict[str, Any] = json.loads(events[1][1])
    assert error["message_type"] == "error_message" and error["run_id"].startswith("run-")
    assert error["error_type"] == "internal_error"
    return error


@pytest.mark.parametrize("route", ["agent", "conv"])
@pytest.mark.parametrize("pings", [False, True])
@pytest.mark.parametrize("background", [False, True])
def test_a_pending_approval_is_an_in_stream_error_pings_or_not(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, route: str, pings: bool, background: bool
) -> None:
    agent_id, conv_id = blocked(client, mock_llm)
    body = {"messages": USER, "streaming": True, "include_pings": pings, "background": background}
    response = http.post(stream_url(route, agent_id, conv_id), json=body)
    error = refused_tail(response, pings=pings)
    assert error["message"] == error["detail"] == PENDING
    assert (error["seq_id"] is not None) is background  # a background stream's chunks are numbered
    run = client.runs.retrieve(error["run_id"])
    assert (run.status, run.stop_reason) == ("failed", "error")
    assert (run.metadata or {})["error"]["detail"] == PENDING
    assert len(mock_llm.requests) == 2  # the two turns that stopped; the refused send never reached the model


@pytest.mark.parametrize("route", ["agent", "conv"])
@pytest.mark.parametrize("pings", [False, True])
def test_answers_that_match_nothing_are_a_generic_in_stream_error(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, route: str, pings: bool
) -> None:
    agent_id, conv_id = blocked(client, mock_llm)
    pending = "call_a" if route == "agent" else "call_c"
    body = {"messages": answer("call_x"), "include_pings": pings, "stream_tokens": True}
    error = refused_tail(http.post(stream_url(route, agent_id, conv_id), json=body), pings=pings)
    # Letta raises these as a plain ValueError: its stream gives the generic message, the text in detail.
    assert error["message"] == UNKNOWN
    assert error["detail"] == f"Invalid tool call IDs. Expected '['{pending}']', but received '['call_x']'."
    run = client.runs.retrieve(error["run_id"])
    assert (run.metadata or {})["error"] == error

    # Answering again once nothing is pending is the same kind of refusal.
    mock_llm.script(Reply.text("Done."))
    http.post(stream_url(route, agent_id, conv_id), json={"messages": answer(pending)}).raise_for_status()
    error = refused_tail(http.post(stream_url(route, agent_id, conv_id), json=body), pings=pings)
    assert (error["message"], error["detail"]) == (UNKNOWN, NO_PENDING)


def test_letta_client_raises_the_refusal_while_reading_not_at_the_request(client: Letta, mock_llm: MockLLM) -> None:
    agent_id, conv_id = blocked(client, mock_llm)
    streams = [
        lambda: client.agents.messages.stream(agent_id, messages=USER, include_pings=False),  # type: ignore[arg-type]
        lambda: client.conversations.messages.create(conv_id, messages=USER, include_pings=False),  # type: ignore[arg-type]
    ]
    for open_stream in streams:
        stream = open_stream()  # the response is a 200 stream: nothing is raised yet
        with pytest.raises(APIStatusError) as raised:
            for _ in stream:
                pass
        assert raised.value.status_code == 200
        body: Any = raised.value.body
        assert body["error_type"] == "internal_error" and body["detail"] == PENDING


@pytest.mark.parametrize("pings", [False, True])
def test_an_unknown_agent_or_conversation_is_a_404_before_the_stream(http: httpx.Client, pings: bool) -> None:
    body = {"messages": USER, "streaming": True, "include_pings": pings}
    agent = http.post(f"/v1/agents/{MISSING_AGENT}/messages/stream", json=body)
    assert (agent.status_code, agent.json()) == (404, {"detail": f"Agent with ID {MISSING_AGENT} not found"})
    conv = http.post(f"/v1/conversations/{MISSING_CONV}/messages", json=body)
    assert conv.status_code == 404 and MISSING_CONV in conv.json()["detail"]


def test_a_busy_agent_is_still_a_409_before_the_stream_without_pings(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    # memlet's own rule (README compatibility notes): one turn at a time on an agent's thread; Letta's agent routes
    # took no lock at all.
    agent = client.agents.create(
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        memory_blocks=[{"label": "persona", "value": "I am a bot."}],
    )
    mock_llm.script(Reply.delay(2.0, then=Reply.text("slow answer")), Reply.text("never"))
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(http.post, f"/v1/agents/{agent.id}/messages/stream", json={"messages": USER})
        deadline = time.monotonic() + 10
        while not [r for r in client.runs.list(agent_id=agent.id).items if r.status == "running"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(ConflictError) as raised:
            client.agents.messages.stream(agent.id, messages=USER, include_pings=False)  # type: ignore[arg-type]
        assert first.result().status_code == 200
    body: Any = raised.value.body
    assert "currently being processed" in body["detail"] and body["run_id"].startswith("run-")
    assert len(mock_llm.requests) == 1
