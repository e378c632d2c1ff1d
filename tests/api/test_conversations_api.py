"""``/v1/conversations``: CRUD, list, fork, history, isolation and sends through letta-client 1.12.1 and httpx."""

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
    [system] = [
        m
        for m in client.conversations.messages.list(conversation_id, order="asc")
        if m.id == conversation.in_context_message_ids[0]
    ]
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
    response = http.post(f"/v1/conversations/?agent_id={agent.id}", json={"isolated_block_labels": ["human", "nope"]})
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


def test_isolated_block_copy_and_shared_block(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    human = client.agents.blocks.retrieve("human", agent_id=agent.id)
    created = http.post(f"/v1/conversations/?agent_id={agent.id}", json={"isolated_block_labels": ["human"]})
    assert created.status_code == 200, created.text
    a = created.json()
    [copy_id] = a["isolated_block_ids"]
    assert copy_id != human.id
    b = client.conversations.create(agent_id=agent.id)

    mock_llm.script(
        Reply.tool_call("memory_replace", {"label": "human", "old_string": "sarah", "new_string": "sam"}),
        Reply.text("noted"),
        Reply.tool_call("memory_replace", {"label": "persona", "old_string": "helpful", "new_string": "witty"}),
        Reply.text("done"),
    )
    send(http, a["id"], "call me sam")
    assert client.blocks.retrieve(copy_id).value == "username: sam"  # the memory tool wrote to A's copy
    assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "username: sarah"
    send(http, a["id"], "be witty")  # `persona` is shared: the agent's block changes for everyone
    assert "username: sam" in mock_llm.requests[2]["messages"][0]["content"]  # A's next turn shows its copy
    assert client.agents.blocks.retrieve("persona", agent_id=agent.id).value == "a witty bot"

    mock_llm.script(Reply.text("hello b"))
    send(http, b.id, "hi")
    b_system = mock_llm.requests[-1]["messages"][0]["content"]
    assert "a witty bot" in b_system and "username: sarah" in b_system and "username: sam" not in b_system
    assert f"CONVERSATION_ID: {b.id}" in b_system

    client.conversations.delete(a["id"])
    with pytest.raises(APIStatusError):
        client.blocks.retrieve(copy_id)  # the isolated copy goes with its conversation


def test_fork_honours_message_id_and_outlives_its_source(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    source = client.conversations.create(agent_id=agent.id, model=MODEL)
    mock_llm.script(Reply.text("one"), Reply.text("two"))
    send(http, source.id, "first")
    send(http, source.id, "second")
    window = client.conversations.retrieve(source.id).in_context_message_ids
    assert len(window) == 5

    whole = client.conversations.fork(source.id)
    assert whole.in_context_message_ids[1:] == window[1:] and whole.in_context_message_ids[0] != window[0]
    assert whole.model == MODEL and whole.summary is None

    cut = client.conversations.fork(source.id, message_id=window[2])  # the first reply
    assert cut.in_context_message_ids[1:] == window[1:3]
    missing = http.post(f"/v1/conversations/{source.id}/fork", params={"message_id": "message-nope"})
    assert missing.status_code == 404

    mock_llm.script(Reply.text("three"))
    send(http, cut.id, "third")
    assert user_texts(mock_llm.requests[-1]) == ["first", "third"]  # the cut context, then the new turn

    client.conversations.delete(source.id)
    assert len(client.conversations.retrieve(whole.id).in_context_message_ids) == 5
    history = client.conversations.messages.list(whole.id, order="asc").items
    assert [m.id for m in history] == whole.in_context_message_ids  # its own system message first


def test_default_thread_and_agent_alias(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    no_agent = http.post("/v1/conversations/default/messages", json={"input": "hi", "streaming": False})
    assert no_agent.status_code == 404
    mock_llm.script(Reply.text("hi default"))
    send(http, "default", "hello", agent_id=agent.id)
    assert len(client.agents.retrieve(agent.id).message_ids or []) == 3  # the agent's own thread
    via_alias = http.get(f"/v1/conversations/{agent.id}/messages", params={"order": "asc"})
    assert via_alias.status_code == 200
    assert [m["message_type"] for m in via_alias.json()] == ["system_message", "user_message", "assistant_message"]
    assert http.get("/v1/conversations/default/messages").status_code == 404
    assert http.get(f"/v1/conversations/{agent.id}").status_code == 422  # CRUD routes take conv ids only


def test_list_order_by_activity(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    older = client.conversations.create(agent_id=agent.id)
    newer = client.conversations.create(agent_id=agent.id)
    idle = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("one"), Reply.text("two"))
    send(http, older.id, "first")
    send(http, newer.id, "second")

    def ids(**params: Any) -> list[str]:
        return [c.id for c in client.conversations.list(agent_id=agent.id, **params)]

    assert ids(order_by="created_at") == [idle.id, newer.id, older.id]
    assert ids(order_by="last_message_at") == [newer.id, older.id, idle.id]  # never-used ones last
    assert ids(order_by="last_message_at", order="asc") == [older.id, newer.id, idle.id]
    assert ids(order_by="last_run_completion") == [newer.id, older.id, idle.id]
    assert ids(order_by="last_message_at", after=newer.id) == [older.id, idle.id]
    assert (
        http.get("/v1/conversations/", params={"after": "conv-00000000-0000-4000-8000-000000000000"}).status_code == 404
    )
