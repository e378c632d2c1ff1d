"""``POST /v1/agents/{agent_id}/messages/preview-raw-payload`` (no letta-client method; raw HTTP, as Letta's own
test does): the body the loop would post to the model, without calling it or storing anything."""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
HELLO = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}]}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(
        model=MODEL, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "username: sarah"}], **kwargs
    )


def preview(http: httpx.Client, agent_id: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(f"/v1/agents/{agent_id}/messages/preview-raw-payload", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_preview_is_exactly_what_the_send_posts(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    payload = preview(http, agent.id, HELLO)
    assert mock_llm.requests == []  # no model call
    assert len(client.agents.messages.list(agent.id, limit=100).items) == 1  # only the system message

    assert payload["model"] == "gpt-4o-mini"
    system, user = payload["messages"]
    assert system["role"] == "system" and "username: sarah" in system["content"]
    assert user == {"role": "user", "content": "hello there"}
    assert {t["function"]["name"] for t in payload["tools"]} == {
        "conversation_search",
        "memory_insert",
        "memory_replace",
    }
    assert payload["tool_choice"] == "auto"
    assert payload["parallel_tool_calls"] is False

    mock_llm.script(Reply.text("hi"))
    http.post(f"/v1/agents/{agent.id}/messages", json=HELLO).raise_for_status()
    [sent] = mock_llm.requests
    streaming = {k: sent.pop(k) for k in ("stream", "stream_options") if k in sent}
    assert streaming["stream"] is True
    assert sent == payload


def test_history_and_v2_tools(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("send_message", {"thinking": "Persona activated.", "message": "Hello!"}))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "first"}])

    payload = preview(http, agent.id, {"input": "second"})
    roles = [m["role"] for m in payload["messages"]]
    assert roles[0] == "system" and roles[-1] == "user"
    assert payload["messages"][-1]["content"] == "second"
    calls = [m["tool_calls"][0] for m in payload["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    greeting, ours = (json.loads(c["function"]["arguments"]) for c in (calls[0], calls[-1]))
    # As in Letta's test_preview_payload: the V2 boot greeting, its thoughts passed back as `thinking`.
    assert calls[0]["function"]["name"] == "send_message" and calls[0]["type"] == "function"
    assert greeting["message"] == "More human than human is our motto."
    assert "Persona activated" in greeting["thinking"]
    # As Letta's V2 loop stores every call: with whether the loop went on (send_message ended the turn).
    assert ours == {"thinking": "Persona activated.", "message": "Hello!", "request_heartbeat": False}
    send_message = next(t for t in payload["tools"] if t["function"]["name"] == "send_message")
    assert "thinking" in send_message["function"]["parameters"]["required"]
    assert payload["tool_choice"] == "required"  # V2 agents must call a tool


def test_client_tools_and_no_persistence(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    body = {
        **HELLO,
        "client_tools": [{"name": "open_door", "description": "Open it.", "parameters": {"type": "object"}}],
    }
    payload = preview(http, agent.id, body)
    assert "open_door" in {t["function"]["name"] for t in payload["tools"]}
    assert preview(http, agent.id, body) == payload  # nothing stored between the two
    assert mock_llm.requests == []


def test_errors(client: Letta, http: httpx.Client) -> None:
    missing = http.post(
        "/v1/agents/agent-00000000-0000-4000-8000-000000000001/messages/preview-raw-payload", json=HELLO
    )
    assert missing.status_code == 404
    agent = make_agent(client)
    empty = http.post(f"/v1/agents/{agent.id}/messages/preview-raw-payload", json={"messages": []})
    assert empty.status_code == 422
