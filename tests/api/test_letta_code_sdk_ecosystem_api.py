"""The Letta Code SDK (`@letta-ai/letta-code-sdk`, and letta-cowork built on it) against memlet: the calls Letta Code
makes for the SDK's sessions, driven with letta-client 1.12.1 and httpx as Letta Code sends them.

The SDK's `session.listMessages()` / `bootstrapState()` (Letta Code's `list_messages` / `bootstrap_session_state`
control requests) read a thread newest first (`order=desc`) and hand back `nextBefore`, the oldest id of the page;
the next page is `before=<that id>`, and Letta Code probes `hasMore` the same way with `limit=1`.
"""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import make_agent, send
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def talk(http: httpx.Client, conversation_id: str, mock_llm: MockLLM, turns: int, **extra: Any) -> None:
    for n in range(turns):
        mock_llm.script(Reply.text(f"reply {n}"))
        send(http, conversation_id, f"message {n}", **extra)


def page(http: httpx.Client, conversation_id: str, **params: Any) -> list[str]:
    response = http.get(f"/v1/conversations/{conversation_id}/messages", params=params)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()]


def walk_back(http: httpx.Client, conversation_id: str, **params: Any) -> list[list[str]]:
    """Letta Code's `list_messages` paging: newest first, each next page `before` the oldest id seen."""
    pages = [page(http, conversation_id, order="desc", limit=2, **params)]
    while pages[-1] and len(pages) < 10:
        pages.append(page(http, conversation_id, order="desc", limit=2, before=pages[-1][-1], **params))
    return pages[:-1]


@pytest.mark.parametrize("thread", ["conversation", "default"])
def test_list_messages_pages_back_to_older_messages(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, thread: str
) -> None:
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id).id if thread == "conversation" else "default"
    params = {"agent_id": agent.id} if thread == "default" else {}
    talk(http, conversation, mock_llm, 3, **params)
    newest_first = page(http, conversation, order="desc", limit=100, **params)
    assert len(newest_first) == 7  # the system message, then three turns of a user message and a reply
    # As on Letta, `before` is the older side whatever the order: the pages go back through the whole thread once.
    pages = walk_back(http, conversation, **params)
    assert [len(p) for p in pages] == [2, 2, 2, 1]
    assert [i for p in pages for i in p] == newest_first
    # Letta Code's `hasMore` probe: nothing is older than the thread's first message.
    assert page(http, conversation, order="desc", limit=1, before=newest_first[-1], **params) == []
    # Both cursors: the messages between them.
    between = page(http, conversation, order="desc", before=newest_first[1], after=newest_first[5], **params)
    assert between == newest_first[2:5]


def test_sdk_auto_pagination_still_walks_newest_first(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    # letta-client's pages ask for the next one with `after` = the last id: newest first, that walks to older rows.
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id).id
    talk(http, conversation, mock_llm, 3)
    walked = [m.id for m in client.conversations.messages.list(conversation, order="desc", limit=2)]
    assert walked == page(http, conversation, order="desc", limit=100)
