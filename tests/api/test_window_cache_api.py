"""The server keeps each thread's in-context rows between turns (`loop/window_cache.py`), in the agent's own thread
and in a conversation alike: a turn reads in full only what the last one wrote, and the model still sees the whole
window (letta-client 1.12.1 and httpx against the live server)."""

from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_conversations_api import make_agent, send, user_texts
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply


def _cache(server: LiveServer) -> Any:
    cache = server.server.config.app.state.window_cache  # type: ignore[attr-defined]
    assert cache is not None  # on by default (MEMLET_CONTEXT_CACHE_MB=16)
    return cache


def test_a_send_reads_in_full_only_the_last_turns_rows(server: LiveServer, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = make_agent(client)
    for n in range(3):
        mock_llm.script(Reply.text(f"reply {n}"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": f"message {n}"}])
    cache = _cache(server)
    before = cache.rows_read
    mock_llm.script(Reply.text("reply 3"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "message 3"}])
    assert cache.rows_read - before == 2  # "message 2" and "reply 2"
    assert user_texts(mock_llm.requests[-1])[-4:] == [f"message {n}" for n in range(4)]


def test_a_conversation_turn_reads_in_full_only_the_last_turns_rows(
    server: LiveServer, client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    mock_llm.reset()
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id)
    for n in range(3):
        mock_llm.script(Reply.text(f"reply {n}"))
        send(http, conversation.id, f"message {n}")
    cache = _cache(server)
    before = cache.rows_read
    mock_llm.script(Reply.text("reply 3"))
    send(http, conversation.id, "message 3")
    assert cache.rows_read - before == 2
    assert user_texts(mock_llm.requests[-1])[-4:] == [f"message {n}" for n in range(4)]
