"""Approvals and what follows them, per agent type, as Letta 0.16.8 does (issue #11 item 3).

V2 goes on after an approved call only when the model asked for a heartbeat, and after a denial with its own
continuation heartbeat; V3 goes on when any call was denied or answered by the client, even next to a terminal
tool; answers re-sent after they were applied are a keep-alive, not a 400.
"""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
GATED = [{"type": "requires_approval", "tool_name": "conversation_search"}]
LOOKUP = '''def lookup(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: What to look up.
    """
    return "found " + topic
'''


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    blocks = [{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}]
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=blocks, **kwargs)  # type: ignore[arg-type]


def answer(call_id: str, approve: bool, reason: str | None = None) -> dict[str, Any]:
    item = {"type": "approval", "tool_call_id": call_id, "approve": approve, "reason": reason}
    return {"type": "approval", "approvals": [item]}


def ask(client: Letta, agent_id: str) -> None:
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "search"}])
    assert response.stop_reason.stop_reason == "requires_approval"


def test_v2_continues_after_an_approval_only_when_the_call_asked_for_a_heartbeat(
    client: Letta, mock_llm: MockLLM
) -> None:
    # A custom tool has no continue rule, so only the model's heartbeat can keep a V2 loop going.
    tool = client.tools.create(source_code=LOOKUP)
    rules = [{"type": "requires_approval", "tool_name": "lookup"}]
    agent = make_agent(client, agent_type="memgpt_v2_agent", tool_ids=[tool.id], tool_rules=rules)
    quiet = {"thinking": "Look.", "topic": "tea", "request_heartbeat": False}
    mock_llm.script(Reply.tool_call("lookup", quiet, id="call_quiet"))
    ask(client, agent.id)
    done = client.agents.messages.create(agent.id, messages=[answer("call_quiet", True)])
    assert done.stop_reason.stop_reason == "end_turn"
    assert len(mock_llm.requests) == 1  # the model is not called again

    loud = {"thinking": "Look.", "topic": "tea", "request_heartbeat": True}
    mock_llm.script(
        Reply.tool_call("lookup", loud, id="call_loud"),
        Reply.tool_call("send_message", {"thinking": "Tell.", "message": "Found it."}),
    )
    ask(client, agent.id)
    going = client.agents.messages.create(agent.id, messages=[answer("call_loud", True)])
    assert going.stop_reason.stop_reason == "end_turn"
    assert len(mock_llm.requests) == 3 and going.messages[-1].content == "Found it."  # type: ignore[union-attr]
    assert "user_message" not in [m.message_type for m in going.messages]


def test_v2_denial_adds_the_continuation_heartbeat(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent", tool_rules=GATED)
    quiet = {"thinking": "Look.", "query": "tea", "request_heartbeat": False}
    mock_llm.script(
        Reply.tool_call("conversation_search", quiet, id="call_no"),
        Reply.tool_call("send_message", {"thinking": "Fine.", "message": "OK, I won't."}),
    )
    ask(client, agent.id)
    response = client.agents.messages.create(agent.id, messages=[answer("call_no", False, "not now")])
    assert response.stop_reason.stop_reason == "end_turn"
    assert len(mock_llm.requests) == 2
    last = mock_llm.requests[1]["messages"][-1]
    assert last["role"] == "user" and "Continuing: user denied request to call tool." in json.dumps(last)
    assert "user_message" not in [m.message_type for m in response.messages]


def test_v3_continues_when_a_terminal_tool_is_denied(client: Letta, mock_llm: MockLLM) -> None:
    # A denial always gives the model another turn in V3, even for a tool that would end the turn had it run.
    # (Two calls side by side cannot happen here: with a rule besides requires_approval, parallel calls are off.)
    rules = [*GATED, {"type": "exit_loop", "tool_name": "conversation_search"}]
    agent = make_agent(client, tool_rules=rules)
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "tea"}, id="call_deny"),
        Reply.text("Understood; I did not search."),
    )
    ask(client, agent.id)
    response = client.agents.messages.create(agent.id, messages=[answer("call_deny", False, "no")])
    assert response.stop_reason.stop_reason == "end_turn"
    assert len(mock_llm.requests) == 2 and response.messages[-1].content == "Understood; I did not search."  # type: ignore[union-attr]


def test_resending_an_applied_approval_is_a_keep_alive(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client, tool_rules=GATED)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}, id="call_once"), Reply.text("Found."))
    ask(client, agent.id)
    first = client.agents.messages.create(agent.id, messages=[answer("call_once", True)])
    assert first.stop_reason.stop_reason == "end_turn" and len(mock_llm.requests) == 2

    mock_llm.script(Reply.text("Still here."))
    again = http.post(f"/v1/agents/{agent.id}/messages/stream", json={"messages": [answer("call_once", True)]})
    assert again.status_code == 200
    assert '"stop_reason":"end_turn"' in again.text and "Still here." in again.text
    assert len(mock_llm.requests) == 3
    last = mock_llm.requests[2]["messages"][-1]
    assert last["role"] == "user" and "keep-alive" in json.dumps(last)
    # The search ran once: one tool return for the call in the whole history.
    history = client.agents.messages.list(agent.id, limit=100).items
    assert [m.tool_call_id for m in history if m.message_type == "tool_return_message"] == ["call_once"]
