"""Which thread an export carries: a conversation's context and history with `conversation_id`, else the agent's
own thread, and a re-import that goes on from there."""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.agent_files_support import EMBEDDING, MODEL, export, import_bytes
from tests.api.test_conversations_api import send, user_texts
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def _agent(client: Letta) -> Any:
    return client.agents.create(
        name="threads",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "human", "value": "username: sarah"}, {"label": "persona", "value": "a bot"}],
    )


def _texts(entry: dict[str, Any], message_ids: list[str], role: str) -> list[str]:
    by_id = {m["id"]: m for m in entry["messages"]}
    return [part["text"] for i in message_ids if by_id[i]["role"] == role for part in by_id[i]["content"]]


class TestConversationExport:
    def test_carries_the_conversations_context_into_the_copy(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = _agent(client)
        source = client.conversations.create(agent_id=agent.id)
        mock_llm.script(Reply.text("one"))
        send(http, source.id, "first")
        fork = client.conversations.fork(source.id)  # shares the source's rows: they are not its own
        mock_llm.script(Reply.text("two"))
        send(http, fork.id, "second")
        window = client.conversations.retrieve(fork.id).in_context_message_ids
        document = export(http, agent.id, conversation_id=fork.id)
        entry = document["agents"][0]
        in_context = entry["in_context_message_ids"]
        assert len(in_context) == len(window) == 5
        assert _texts(entry, in_context[:1], "system")  # the fork's own system message first
        assert _texts(entry, in_context, "user") == ["first", "second"]
        (copy_id,) = import_bytes(client, json.dumps(document).encode())
        assert len(client.agents.retrieve(copy_id).message_ids or []) == 5
        mock_llm.script(Reply.text("three"))
        client.agents.messages.create(copy_id, messages=[{"role": "user", "content": "third"}])
        assert user_texts(mock_llm.requests[-1]) == ["first", "second", "third"]

    def test_an_unknown_or_foreign_conversation_is_a_404(self, client: Letta, http: httpx.Client) -> None:
        agent, other = _agent(client), _agent(client)
        foreign = client.conversations.create(agent_id=other.id)
        for conversation_id in (foreign.id, "conv-00000000-0000-4000-8000-000000000000"):
            response = http.get(f"/v1/agents/{agent.id}/export", params={"conversation_id": conversation_id})
            assert response.status_code == 404, response.text


class TestDefaultExport:
    def test_carries_the_agents_own_thread_only(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        agent = _agent(client)
        mock_llm.script(Reply.text("own reply"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "in the agent's thread"}])
        conversation = client.conversations.create(agent_id=agent.id)
        mock_llm.script(Reply.text("conversation reply"))
        send(http, conversation.id, "in a conversation")
        for params in ({}, {"conversation_id": "default"}, {"conversation_id": agent.id}):
            entry = export(http, agent.id, **params)["agents"][0]
            everything = [m["id"] for m in entry["messages"]]
            assert _texts(entry, everything, "user") == ["in the agent's thread"]
            assert set(entry["in_context_message_ids"]) <= set(everything)
