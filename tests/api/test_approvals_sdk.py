"""Human in the loop over HTTP with the official letta-client: approve, deny with a reason, client-side tool results.

Each test checks what the model was sent on its next request (the mock records every request body), not only what
the server answered, and whether the gated tool really ran (a block it edits, a value only its code computes).
"""

import json
from typing import Any

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
HUMAN = "The human's name is Bob."
MULTIPLY = '''def multiply(a: int, b: int) -> str:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return "product=" + str(a * b)
'''
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city, looked up on the user's device.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    blocks = [{"label": "human", "value": HUMAN}, {"label": "persona", "value": "I am Sam."}]
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=blocks, **kwargs)  # type: ignore[arg-type]


def tool_message(request: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The one `role: tool` message answering `call_id` in a recorded chat request."""
    found = [m for m in request["messages"] if m["role"] == "tool" and m.get("tool_call_id") == call_id]
    assert len(found) == 1, request["messages"]
    return found[0]


def returned_text(message: dict[str, Any]) -> dict[str, Any]:
    """The packed tool return memlet sends as a tool message's content: {"status", "message", "time"}."""
    content = message["content"]
    text = content if isinstance(content, str) else "".join(part["text"] for part in content)
    return dict(json.loads(text))


def ask_and_expect_approval(client: Letta, mock_llm: MockLLM, agent_id: str, reply: Reply, **send: Any) -> str:
    """Send one user message, the model answers with a gated call; returns the call id awaiting approval."""
    mock_llm.script(reply)
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "go"}], **send)
    assert response.stop_reason.stop_reason == "requires_approval"
    request = response.messages[-1]
    assert request.message_type == "approval_request_message"
    calls = request.tool_calls
    assert isinstance(calls, list) and len(calls) == 1
    assert len(mock_llm.requests) == 1
    return str(calls[0].tool_call_id)


class TestApprove:
    def test_approved_tool_runs_and_its_return_reaches_the_model(self, client: Letta, mock_llm: MockLLM) -> None:
        tool = client.tools.create(source_code=MULTIPLY, default_requires_approval=True)
        agent = make_agent(client, tool_ids=[tool.id])
        call_id = ask_and_expect_approval(
            client, mock_llm, agent.id, Reply.tool_call("multiply", {"a": 6, "b": 7}, id="call_mul")
        )
        assert call_id == "call_mul"

        mock_llm.script(Reply.text("It is 42."))
        approval = {"type": "approval", "approvals": [{"type": "approval", "tool_call_id": call_id, "approve": True}]}
        response = client.agents.messages.create(agent.id, messages=[approval])

        assert response.stop_reason.stop_reason == "end_turn"
        # As in Letta, the response holds what the answer caused, not the answer itself (the history keeps it).
        kinds = [m.message_type for m in response.messages]
        assert kinds == ["tool_return_message", "assistant_message"]
        history = [m.message_type for m in client.agents.messages.list(agent.id, limit=100).items]
        assert history[-3:] == ["approval_response_message", "tool_return_message", "assistant_message"]
        tool_return = response.messages[0]
        assert tool_return.tool_call_id == call_id and tool_return.status == "success"
        assert "product=42" in tool_return.tool_return
        # The model's second request carries the value only the tool's code computes.
        assert len(mock_llm.requests) == 2
        sent = returned_text(tool_message(mock_llm.requests[1], call_id))
        assert sent["status"] == "OK" and sent["message"] == "product=42"
        assembled = [m for m in mock_llm.requests[1]["messages"] if m.get("tool_calls")]
        assert [c["id"] for c in assembled[-1]["tool_calls"]] == [call_id]

    def test_the_agent_shows_the_request_it_waits_on(self, client: Letta, mock_llm: MockLLM) -> None:
        tool = client.tools.create(source_code=MULTIPLY, default_requires_approval=True)
        agent = make_agent(client, tool_ids=[tool.id])
        other = make_agent(client)
        assert client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval is None
        call_id = ask_and_expect_approval(
            client, mock_llm, agent.id, Reply.tool_call("multiply", {"a": 2, "b": 3}, id="call_wait")
        )
        shown = client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval
        assert shown is not None and shown.message_type == "approval_request_message"
        assert [(c.tool_call_id, c.name, json.loads(c.arguments)) for c in shown.tool_calls] == [
            (call_id, "multiply", {"a": 2, "b": 3})
        ]
        assert shown.id == client.agents.retrieve(agent.id).message_ids[-1]
        # Only when asked for, and per agent in a listing.
        assert client.agents.retrieve(agent.id).pending_approval is None
        listed = {a.id: a.pending_approval for a in client.agents.list(include=["agent.pending_approval"]).items}
        assert listed[other.id] is None and listed[agent.id] is not None and listed[agent.id].id == shown.id

        mock_llm.script(Reply.text("It is 6."))
        approval = {"type": "approval", "approvals": [{"type": "approval", "tool_call_id": call_id, "approve": True}]}
        client.agents.messages.create(agent.id, messages=[approval])
        assert client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval is None


class TestDeny:
    def test_denial_reason_reaches_the_model_and_the_tool_never_runs(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        client.agents.tools.update_approval("memory_insert", agent_id=agent.id, body_requires_approval=True)
        edit = {"label": "human", "new_string": "Bob likes tea."}
        call_id = ask_and_expect_approval(client, mock_llm, agent.id, Reply.tool_call("memory_insert", edit))

        mock_llm.script(Reply.text("Understood, I will not save that."))
        reason = "do not store my preferences"
        denial = {
            "type": "approval",
            "approvals": [{"type": "approval", "tool_call_id": call_id, "approve": False, "reason": reason}],
        }
        response = client.agents.messages.create(agent.id, messages=[denial])

        assert response.stop_reason.stop_reason == "end_turn"
        listed = client.agents.messages.list(agent.id, limit=100).items
        answer = next(m for m in listed if m.message_type == "approval_response_message")
        assert [(a.tool_call_id, a.approve, a.reason) for a in answer.approvals] == [(call_id, False, reason)]
        tool_return = response.messages[0]
        assert tool_return.message_type == "tool_return_message" and tool_return.status == "error"
        # The model is told it was denied, and why.
        assert len(mock_llm.requests) == 2
        sent = returned_text(tool_message(mock_llm.requests[1], call_id))
        assert sent["status"] == "Failed"
        assert sent["message"] == f"Error: request to call tool denied. User reason: {reason}"
        # memory_insert never ran: the block and the system prompt the model saw are unchanged.
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == HUMAN
        system = mock_llm.requests[1]["messages"][0]["content"]
        assert HUMAN in system and "likes tea" not in system


class TestClientToolReturn:
    def test_client_supplied_return_is_stored_and_sent_to_the_model(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        call = Reply.tool_call("get_weather", {"city": "Lisbon"}, id="call_wx")
        call_id = ask_and_expect_approval(client, mock_llm, agent.id, call, client_tools=[WEATHER_TOOL])
        offered = [t["function"]["name"] for t in mock_llm.requests[0]["tools"]]
        assert "get_weather" in offered

        mock_llm.script(Reply.text("Sunny in Lisbon."))
        result = {
            "type": "tool",
            "tool_call_id": call_id,
            "tool_return": "sunny, 21C",
            "status": "success",
            "stdout": ["looked up on device"],
        }
        response = client.agents.messages.create(
            agent.id, messages=[{"type": "approval", "approvals": [result]}], client_tools=[WEATHER_TOOL]
        )

        assert response.stop_reason.stop_reason == "end_turn"
        assert len(mock_llm.requests) == 2
        sent = returned_text(tool_message(mock_llm.requests[1], call_id))
        assert sent["status"] == "OK" and sent["message"] == "sunny, 21C"
        # Stored: the history shows the client's result as the call's tool return.
        history = client.agents.messages.list(agent.id, limit=50, order="asc").items
        returns = [m for m in history if m.message_type == "tool_return_message"]
        assert [(m.tool_call_id, m.status, m.tool_return) for m in returns] == [(call_id, "success", "sunny, 21C")]
        assert returns[0].stdout == ["looked up on device"]
        answers = [m for m in history if m.message_type == "approval_response_message"]
        assert len(answers) == 1
        item = answers[0].approvals[0]
        assert (item.type, item.tool_call_id, item.status) == ("tool", call_id, "success")

    def test_tool_return_message_form_is_accepted_too(self, client: Letta, mock_llm: MockLLM) -> None:
        # letta-client also sends client results as {"type": "tool_return", "tool_returns": [...]}.
        agent = make_agent(client)
        call = Reply.tool_call("get_weather", {"city": "Oslo"}, id="call_oslo")
        call_id = ask_and_expect_approval(client, mock_llm, agent.id, call, client_tools=[WEATHER_TOOL])

        mock_llm.script(Reply.text("Cold in Oslo."))
        result = {"type": "tool", "tool_call_id": call_id, "tool_return": "snow, -4C", "status": "success"}
        response = client.agents.messages.create(
            agent.id, messages=[{"type": "tool_return", "tool_returns": [result]}], client_tools=[WEATHER_TOOL]
        )

        assert response.stop_reason.stop_reason == "end_turn"
        sent = returned_text(tool_message(mock_llm.requests[1], call_id))
        assert sent["status"] == "OK" and sent["message"] == "snow, -4C"
