"""An agent's message history through letta-client and raw HTTP: listing (order, cursors, filters), editing, reset."""

import httpx
import pytest
from letta_client import Letta

from tests.api.test_messages_api import BLOCKS, make_agent, send
from tests.mock_llm import MockLLM, Reply


def _chat(http: httpx.Client, client: Letta, mock_llm: MockLLM, turns: int) -> str:
    agent = make_agent(client)
    for i in range(turns):
        mock_llm.script(Reply.text(f"reply {i}"))
        assert send(http, agent.id, f"message {i}").status_code == 200
    return str(agent.id)


class TestListMessages:
    def test_default_is_newest_rows_oldest_first(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent_id = _chat(http, client, mock_llm, 3)
        page = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 3}).json()
        assert [(m["message_type"], m["content"]) for m in page] == [
            ("assistant_message", "reply 1"),
            ("user_message", "message 2"),
            ("assistant_message", "reply 2"),
        ]
        earlier = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 3, "before": page[0]["id"]}).json()
        assert [m["content"] for m in earlier] == ["message 0", "reply 0", "message 1"]

    @pytest.mark.parametrize("order", ["asc", "desc"])
    def test_auto_pagination_returns_each_message_once(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, order: str
    ) -> None:
        agent_id = _chat(http, client, mock_llm, 3)
        everything = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 100, "order": "asc"}).json()
        assert len(everything) == 7  # system + 3 x (user, assistant)
        walked = [m.id for m in client.agents.messages.list(agent_id, order=order, limit=2)]  # type: ignore[arg-type]
        expected = [m["id"] for m in everything]
        assert walked == (expected if order == "asc" else expected[::-1])

    def test_default_auto_pagination_never_repeats(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        agent_id = _chat(http, client, mock_llm, 3)
        walked = [m.id for m in client.agents.messages.list(agent_id, limit=2)]
        assert len(walked) == len(set(walked)) == 2

    def test_unknown_cursor_404(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        missing = "message-00000000-0000-4000-8000-000000000000"
        response = http.get(f"/v1/agents/{agent.id}/messages", params={"after": missing})
        assert response.status_code == 404
        assert response.json() == {"detail": f"No message found with id '{missing}' for agent '{agent.id}'."}

    def test_an_unknown_agent_is_404_with_or_without_a_cursor(self, http: httpx.Client) -> None:
        missing = "agent-00000000-0000-4000-8000-000000000002"
        cursor = "message-00000000-0000-4000-8000-000000000000"
        for params in ({}, {"limit": 5}, {"after": cursor}, {"before": cursor}, {"order": "desc"}):
            response = http.get(f"/v1/agents/{missing}/messages", params=params)
            assert response.status_code == 404, params
            assert response.json() == {"detail": f"Agent with ID {missing} not found"}, params

    def test_filters_that_match_nothing_give_an_empty_page(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent_id = _chat(http, client, mock_llm, 1)
        conversation = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        group = {"group_id": "group-00000000-0000-4000-8000-000000000000"}
        for params in (group, {**group, "conversation_id": "default"}, {**group, "conversation_id": conversation}):
            response = http.get(f"/v1/agents/{agent_id}/messages", params=params)
            assert (response.status_code, response.json()) == (200, []), params
        fresh = http.get(f"/v1/agents/{agent_id}/messages", params={"conversation_id": conversation}).json()
        assert [m["message_type"] for m in fresh] == ["system_message"]  # a new conversation's own system prompt
        own = http.get(f"/v1/agents/{agent_id}/messages", params={"conversation_id": "default"}).json()
        assert [m["content"] for m in own if m["message_type"] != "system_message"] == ["message 0", "reply 0"]

    def test_v2_history_hides_send_message_plumbing(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client, agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "hm", "message": "Hi!"}))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])
        shown = client.agents.messages.list(agent.id).items
        assert "tool_return_message" not in [m.message_type for m in shown]
        raw = client.agents.messages.list(agent.id, use_assistant_message=False).items
        assert any(m.message_type == "tool_call_message" for m in raw)

    def test_retrieve_message_by_id(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent_id = _chat(http, client, mock_llm, 1)
        last = http.get(f"/v1/agents/{agent_id}/messages").json()[-1]
        views = http.get(f"/v1/messages/{last['id']}").json()
        assert [v["id"] for v in views] == [last["id"]]
        missing = "message-00000000-0000-4000-8000-000000000000"
        assert http.get(f"/v1/messages/{missing}").json() == {"detail": f"Message with id {missing} not found."}

    def test_retrieve_shows_a_rows_parts_last_first(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "cats"}, content="Let me look."), Reply.text("ok")
        )
        client.agents.messages.create(agent.id, input="cats?")
        listed = http.get(f"/v1/agents/{agent.id}/messages", params={"order": "asc"}).json()
        call = next(m for m in listed if m["message_type"] == "tool_call_message")
        views = http.get(f"/v1/messages/{call['id']}").json()
        # Letta's default conversion reverses a row's parts: the call, then the thought before it.
        assert [v["message_type"] for v in views] == ["tool_call_message", "reasoning_message"]
        assert views[1]["reasoning"] == "Let me look." and views[0]["tool_call"]["name"] == "conversation_search"


class TestModifyMessage:
    def test_editing_is_gone(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent_id = _chat(http, client, mock_llm, 1)
        message_id = http.get(f"/v1/agents/{agent_id}/messages").json()[-1]["id"]
        response = http.patch(
            f"/v1/agents/{agent_id}/messages/{message_id}",
            json={"message_type": "assistant_message", "content": "edited"},
        )
        assert response.status_code == 405
        assert response.json()["detail"].startswith("Message editing is no longer supported.")


class TestReset:
    def test_keeps_memory_and_history_clears_context(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent_id = _chat(http, client, mock_llm, 2)
        before = client.agents.retrieve(agent_id)
        assert len(before.message_ids or []) == 5
        assert client.agents.messages.reset(agent_id) is None  # Letta answers a 1.x SDK with null
        state = client.agents.retrieve(agent_id, include=["agent.blocks"])
        assert state.message_ids == (before.message_ids or [])[:1]
        assert [b.value for b in state.memory.blocks] == [b["value"] for b in BLOCKS]
        assert len(http.get(f"/v1/agents/{agent_id}/messages").json()) == 5  # history survives (recall memory)

    def test_default_initial_messages_for_memgpt(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client, agent_type="memgpt_v2_agent")
        # A client that is not a 1.x SDK (here httpx's own User-Agent) gets the agent's state back, as from Letta.
        response = http.patch(f"/v1/agents/{agent.id}/reset-messages", json={"add_default_initial_messages": True})
        assert response.status_code == 200 and len(response.json()["message_ids"]) == 4
        sdk = http.patch(
            f"/v1/agents/{agent.id}/reset-messages", json={}, headers={"User-Agent": "letta-client/1.12.1"}
        )
        assert (sdk.status_code, sdk.json()) == (200, None)
