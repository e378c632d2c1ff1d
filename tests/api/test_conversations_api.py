"""``/v1/conversations``: CRUD, list, fork, history, isolation and sends through letta-client 1.12.1 and httpx."""

import json
from typing import Any

import httpx
import pytest
from letta_client import APIStatusError, Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta) -> Any:
    return client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[
            {"label": "human", "value": "username: sarah"},
            {"label": "persona", "value": "a helpful bot"},
        ],
    )


def send(http: httpx.Client, conversation_id: str, text: str, **extra: Any) -> dict[str, Any]:
    """A blocking send (letta-client's messages.create always parses SSE, so use raw HTTP for JSON)."""
    body = {"messages": [{"role": "user", "content": text}], "streaming": False, **extra}
    response = http.post(f"/v1/conversations/{conversation_id}/messages", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def system_text(client: Letta, conversation_id: str) -> str:
    conversation = client.conversations.retrieve(conversation_id)
    [system] = [m for m in client.conversations.messages.list(conversation_id, order="asc") if m.id == conversation.in_context_message_ids[0]]
    return str(system.content)


def test_crud_and_list(client: Letta, http: httpx.Client) -> None:
    agent = make_agent(client)
    first = client.conversations.create(agent_id=agent.id, summary="Alpha thread", description="d")
    assert first.id.startswith("conv-") and first.agent_id == agent.id
    assert len(first.in_context_message_ids) == 1  # its own system message, written at create
    assert "CONVERSATION_ID: " + first.id in system_text(client, first.id)
    second = client.conversations.create(agent_id=agent.id, summary="beta thread")

    got = client.conversations.retrieve(first.id)
    assert got.summary == "Alpha thread" and got.description == "d"
    updated = client.conversations.update(first.id, summary="Alpha renamed", archived=True, context_window_limit=9000)
    assert updated.summary == "Alpha renamed" and updated.archived and updated.context_window_limit == 9000

    listed = client.conversations.list(agent_id=agent.id, order="asc")
    assert [c.id for c in listed] == [first.id, second.id]
    assert [c.id for c in client.conversations.list(agent_id=agent.id, summary_search="Alpha")] == [first.id]
    assert client.conversations.list(agent_id=agent.id, summary_search="alpha") == []  # case-sensitive
    page = client.conversations.list(agent_id=agent.id, order="asc", after=first.id)
    assert [c.id for c in page] == [second.id]

    client.conversations.delete(second.id)
    with pytest.raises(APIStatusError) as err:
        client.conversations.retrieve(second.id)
    assert err.value.status_code == 404
    assert http.get("/v1/conversations/bogus").status_code == 422


def test_create_is_atomic_on_a_bad_label(client: Letta, http: httpx.Client) -> None:
    agent = make_agent(client)
    response = http.post(
        f"/v1/conversations/?agent_id={agent.id}", json={"isolated_block_labels": ["human", "nope"]}
    )
    assert response.status_code == 400 and "'nope'" in response.json()["detail"]
    assert client.conversations.list(agent_id=agent.id) == []
    assert len(client.blocks.list().items) == 2  # no copy of `human` left behind
    bad_model = http.post(f"/v1/conversations/?agent_id={agent.id}", json={"model": "gpt-4o"})
    assert bad_model.status_code == 400


def test_two_conversations_keep_separate_context(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    a = client.conversations.create(agent_id=agent.id)
    b = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("a1"), Reply.text("b1"), Reply.text("a2"))
    send(http, a.id, "apples")
    send(http, b.id, "bananas")
    send(http, a.id, "apricots")
    last = mock_llm.requests[-1]
    assert user_texts(last) == ["apples", "apricots"]
    assert f"CONVERSATION_ID: {a.id}" in last["messages"][0]["content"]
    assert user_texts(mock_llm.requests[1]) == ["bananas"]

    assert len(client.conversations.retrieve(a.id).in_context_message_ids) == 5
    assert len(client.agents.retrieve(agent.id).message_ids or []) == 1  # the agent's own thread is untouched
    default_rows = http.get(f"/v1/agents/{agent.id}/messages", params={"conversation_id": "default"}).json()
    assert [m["message_type"] for m in default_rows] == ["system_message"]
    a_rows = http.get(f"/v1/agents/{agent.id}/messages", params={"conversation_id": a.id, "limit": 50}).json()
    assert {m["message_type"] for m in a_rows} >= {"user_message", "assistant_message"}
    assert len([m for m in a_rows if m["message_type"] == "user_message"]) == 2

    history = client.conversations.messages.list(a.id, order="asc")
    assert [m.message_type for m in history] == [
        "system_message",
        "user_message",
        "assistant_message",
        "user_message",
        "assistant_message",
    ]
