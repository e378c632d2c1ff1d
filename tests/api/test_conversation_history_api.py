"""``GET /v1/conversations/{id}/messages``: the order of rows and of each row's parts, the default thread's pages,
and cursors that name no message of the conversation (letta-client 1.12.1 and httpx against the live server)."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import make_agent, send
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def history(http: httpx.Client, conversation_id: str, **params: Any) -> list[dict[str, Any]]:
    response = http.get(f"/v1/conversations/{conversation_id}/messages", params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def kinds(messages: list[Any]) -> list[str]:
    return [m["message_type"] if isinstance(m, dict) else m.message_type for m in messages]


def talk(http: httpx.Client, conversation_id: str, mock_llm: MockLLM, turns: int, **extra: Any) -> None:
    for n in range(turns):
        mock_llm.script(Reply.text(f"reply {n}", reasoning=f"thinking {n}"))
        send(http, conversation_id, f"message {n}", **extra)


@pytest.mark.parametrize("order", [None, "desc"])
def test_newest_rows_first_with_each_rows_parts_in_order(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, order: str | None
) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    talk(http, conv.id, mock_llm, 2)
    listed = client.conversations.messages.list(conv.id, **({"order": order} if order else {})).items
    # Rows newest first (Letta's default), but the reply's reasoning still comes before its text.
    assert kinds(listed) == [
        "reasoning_message",
        "assistant_message",
        "user_message",
        "reasoning_message",
        "assistant_message",
        "user_message",
        "system_message",
    ]
    assert [m.reasoning for m in listed if m.message_type == "reasoning_message"] == ["thinking 1", "thinking 0"]  # type: ignore[union-attr]


def test_the_default_thread_lists_as_the_agents_history(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    talk(http, "default", mock_llm, 3, agent_id=agent.id)
    everything = history(http, "default", agent_id=agent.id, order="asc", limit=100)
    rows = list(dict.fromkeys(m["id"] for m in everything))  # an assistant row shows as reasoning + reply
    # No order: Letta's page, the newest `limit` messages oldest first (as the agent's own history lists them).
    page = history(http, "default", agent_id=agent.id, limit=4)
    assert list(dict.fromkeys(m["id"] for m in page)) == rows[-4:] and page == everything[-len(page) :]
    assert page == http.get(f"/v1/agents/{agent.id}/messages", params={"limit": 4}).json()
    # An explicit desc is newest first, and `after` walks on to older messages.
    newest = history(http, "default", agent_id=agent.id, order="desc", limit=3)
    older = history(http, "default", agent_id=agent.id, order="desc", limit=3, after=newest[-1]["id"])
    assert list(dict.fromkeys(m["id"] for m in newest + older)) == rows[::-1][:6]
    assert kinds(newest)[:3] == ["reasoning_message", "assistant_message", "user_message"]


def test_a_cursor_of_no_message_here(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    talk(http, conv.id, mock_llm, 1)
    talk(http, "default", mock_llm, 1, agent_id=agent.id)
    elsewhere = history(http, "default", agent_id=agent.id)[-1]["id"]  # a message of the agent's own thread
    unknown = "message-00000000-0000-4000-8000-000000000009"
    whole = history(http, conv.id)
    # In a conversation Letta ignores such a cursor: the page is the one without it.
    assert history(http, conv.id, after=unknown) == whole
    assert history(http, conv.id, before=elsewhere) == whole
    # The default thread reads the agent's history, whose unknown cursor is a 404.
    missing = http.get("/v1/conversations/default/messages", params={"agent_id": agent.id, "after": unknown})
    assert missing.status_code == 404
