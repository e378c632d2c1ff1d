"""``/v1/groups/{id}/messages`` (list, edit, reset) against the live server, through httpx (letta-client 1.12.1 has
no groups resource) and the SDK for agents and sends."""

import asyncio

import httpx
import pytest
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url
from tests.api.test_groups_api import MISSING_GROUP, agent_ids, create
from tests.mock_llm import MockLLM, Reply

MESSAGE_ID = "message-00000000-0000-4000-8000-000000000000"
EDITING_REMOVED = (
    "Message editing is no longer supported. Messages are immutable as they may be shared across multiple "
    "conversations via forking."
)


def tag_with_group(pg_uri: str, agent_id: str, group_id: str) -> None:
    """Mark an agent's non-system messages as the group's (no memlet pattern writes a group id on its own)."""

    async def run() -> None:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE messages SET group_id = :g WHERE agent_id = :a AND role <> 'system'"),
                {"g": group_id, "a": agent_id},
            )
        await engine.dispose()

    asyncio.run(run())


def chat(client: Letta, mock_llm: MockLLM, agent_id: str, turns: int) -> None:
    for i in range(turns):
        mock_llm.script(Reply.text(f"reply {i}"))
        client.agents.messages.create(agent_id, messages=[{"role": "user", "content": f"turn {i}"}])


class TestGroupMessages:
    @pytest.mark.parametrize("pattern", ["supervisor", "dynamic"])
    def test_send_to_a_manager_is_a_plain_send(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, pattern: str
    ) -> None:
        boss, w = agent_ids(client, "boss", "w")
        group_id = create(http, {"agent_ids": [w], "description": "", "manager_config": {
            "manager_type": pattern, "manager_agent_id": boss}})["id"]  # fmt: skip
        mock_llm.script(Reply.text("plain reply"))
        response = client.agents.messages.create(boss, messages=[{"role": "user", "content": "hi"}])
        assert [m.message_type for m in response.messages] == ["assistant_message"]
        assert response.usage.run_ids is None
        listed = http.get(f"/v1/groups/{group_id}/messages")
        assert (listed.status_code, listed.json()) == (200, [])
        assert len(mock_llm.requests) == 1

    def test_modify_message_405_agents_route_text(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        group_id = create(http, {"agent_ids": [a], "description": ""})["id"]
        body = {"message_type": "user_message", "content": "edited"}
        response = http.patch(f"/v1/groups/{group_id}/messages/{MESSAGE_ID}", json=body)
        assert response.status_code == 405
        assert response.json() == {"detail": EDITING_REMOVED}
        agent_route = http.patch(f"/v1/agents/{a}/messages/{MESSAGE_ID}", json=body)
        assert (agent_route.status_code, agent_route.json()) == (405, response.json())
        assert http.patch(f"/v1/groups/{MISSING_GROUP}/messages/{MESSAGE_ID}", json=body).status_code == 404

    def test_reset_unknown_group_404(self, http: httpx.Client) -> None:
        assert http.patch(f"/v1/groups/{MISSING_GROUP}/reset-messages").status_code == 404

    def test_manager_messages_newest_10_oldest_first_then_reset(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, pg_uri: str
    ) -> None:
        boss, w = agent_ids(client, "boss", "w")
        group_id = create(http, {"agent_ids": [w], "description": "", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": boss}})["id"]  # fmt: skip
        chat(client, mock_llm, boss, 6)
        chat(client, mock_llm, w, 1)
        tag_with_group(pg_uri, boss, group_id)
        tag_with_group(pg_uri, w, group_id)  # not the manager's: the manager view leaves it out
        listed = http.get(f"/v1/groups/{group_id}/messages").json()
        assert len(listed) == 10
        assert [m["content"] for m in listed[:2]] == ["turn 1", "reply 1"]
        assert (listed[-1]["message_type"], listed[-1]["content"]) == ("assistant_message", "reply 5")
        newer = http.get(f"/v1/groups/{group_id}/messages", params={"after": listed[-3]["id"]}).json()
        assert [m["content"] for m in newer] == ["turn 5", "reply 5"]
        newest = http.get(f"/v1/groups/{group_id}/messages", params={"order": "desc", "limit": 3}).json()
        assert [m["content"] for m in newest] == ["reply 5", "turn 5", "reply 4"]
        older = http.get(
            f"/v1/groups/{group_id}/messages", params={"order": "desc", "limit": 2, "after": newest[-1]["id"]}
        ).json()
        assert [m["content"] for m in older] == ["turn 4", "reply 3"]
        oldest = http.get(f"/v1/groups/{group_id}/messages", params={"order": "asc", "limit": 2}).json()
        assert [m["content"] for m in oldest] == ["turn 0", "reply 0"]
        every = http.get(f"/v1/groups/{group_id}/messages", params={"limit": 100}).json()
        assert len(every) == 12

        response = http.patch(f"/v1/groups/{group_id}/reset-messages")
        assert (response.status_code, response.json()) == (200, None)
        assert http.get(f"/v1/groups/{group_id}/messages").json() == []
        state = client.agents.retrieve(boss)
        assert len(state.message_ids or []) == 1
        assert [m.message_type for m in client.agents.messages.list(boss)] == ["system_message"]
        assert [m.message_type for m in client.agents.messages.list(w)] == ["system_message"]
        mock_llm.script(Reply.text("still works"))
        after = client.agents.messages.create(boss, messages=[{"role": "user", "content": "again"}])
        assert [m.message_type for m in after.messages] == ["assistant_message"]

    def test_without_manager_lists_every_agents_group_messages(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, pg_uri: str
    ) -> None:
        a, b, c = agent_ids(client, "a", "b", "c")
        group_id = create(http, {"agent_ids": [a, b], "description": ""})["id"]
        chat(client, mock_llm, a, 1)
        chat(client, mock_llm, b, 1)
        chat(client, mock_llm, c, 1)
        tag_with_group(pg_uri, a, group_id)
        tag_with_group(pg_uri, b, group_id)
        listed = http.get(f"/v1/groups/{group_id}/messages", params={"order": "asc"}).json()
        assert [m["content"] for m in listed] == ["turn 0", "reply 0", "turn 0", "reply 0"]
        assert {m["message_type"] for m in listed} == {"user_message", "assistant_message"}
        first = http.get(f"/v1/groups/{group_id}/messages", params={"limit": 3}).json()
        assert [m["id"] for m in first] == [m["id"] for m in listed[:3]]
        newest = http.get(f"/v1/groups/{group_id}/messages", params={"order": "desc", "limit": 1}).json()
        assert [m["id"] for m in newest] == [listed[-1]["id"]]
