"""``/v1/groups`` and ``GET /v1/agents/{id}/groups`` against the live server.

letta-client 1.12.1 has no ``groups`` resource and no ``agents.groups`` (Letta deprecated them), so the group routes
go through raw httpx; agents and blocks go through the SDK, as a user's program would drive them. The group messages
routes are in ``test_group_messages_api.py``.
"""

import httpx
import pytest
from letta_client import Letta

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
MISSING_AGENT = "agent-00000000-0000-4000-8000-000000000000"
MISSING_GROUP = "group-00000000-0000-4000-8000-000000000000"
MISSING_BLOCK = "block-00000000-0000-4000-8000-000000000000"
GROUP_FIELDS = {
    "id",
    "manager_type",
    "agent_ids",
    "description",
    "project_id",
    "template_id",
    "base_template_id",
    "deployment_id",
    "shared_block_ids",
    "manager_agent_id",
    "termination_token",
    "max_turns",
    "sleeptime_agent_frequency",
    "turns_counter",
    "last_processed_message_id",
    "max_message_buffer_length",
    "min_message_buffer_length",
    "hidden",
}


def agent_ids(client: Letta, *names: str) -> list[str]:
    return [client.agents.create(name=n, model=MODEL, embedding=EMBEDDING).id for n in names]


def create(http: httpx.Client, body: dict[str, object], status: int = 200) -> dict[str, object]:
    response = http.post("/v1/groups/", json=body)
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def group_ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [g["id"] for g in response.json()]


class TestCreateGroup:
    def test_no_manager_config_is_round_robin_in_order(self, http: httpx.Client, client: Letta) -> None:
        a, b, c = agent_ids(client, "a", "b", "c")
        group = create(http, {"agent_ids": [c, a, b], "description": "team"})
        assert set(group) == GROUP_FIELDS
        assert group["id"].startswith("group-")  # type: ignore[union-attr]
        assert (group["manager_type"], group["agent_ids"], group["description"]) == ("round_robin", [c, a, b], "team")
        assert (group["manager_agent_id"], group["shared_block_ids"], group["hidden"]) == (None, [], None)
        assert http.get(f"/v1/groups/{group['id']}").json() == group

    def test_supervisor_dynamic_and_sleeptime_columns(self, http: httpx.Client, client: Letta) -> None:
        boss, w1, w2 = agent_ids(client, "boss", "w1", "w2")
        sup = create(http, {"agent_ids": [w1], "description": "", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": boss}})  # fmt: skip
        assert (sup["manager_type"], sup["manager_agent_id"]) == ("supervisor", boss)
        dyn = create(http, {"agent_ids": [w1, w2], "description": "", "manager_config": {
            "manager_type": "dynamic", "manager_agent_id": boss, "max_turns": 3}})  # fmt: skip
        assert (dyn["termination_token"], dyn["max_turns"]) == ("DONE!", 3)
        sleep = create(http, {"agent_ids": [w2], "description": "", "manager_config": {
            "manager_type": "sleeptime", "manager_agent_id": boss, "sleeptime_agent_frequency": 5}})  # fmt: skip
        assert (sleep["sleeptime_agent_frequency"], sleep["turns_counter"]) == (5, -1)

    def test_missing_agent_404_letta_text(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        response = http.post("/v1/groups/", json={"agent_ids": [a, MISSING_AGENT], "description": ""})
        assert response.status_code == 404
        assert response.json() == {"detail": f"Items not found in agents: {{'{MISSING_AGENT}'}}"}
        assert http.get("/v1/groups/count").json() == 0

    def test_dynamic_duplicate_ids_400(self, http: httpx.Client, client: Letta) -> None:
        boss, w = agent_ids(client, "boss", "w")
        body = {"agent_ids": [w, w], "description": "", "manager_config": {
            "manager_type": "dynamic", "manager_agent_id": boss}}  # fmt: skip
        response = http.post("/v1/groups/", json=body)
        assert response.status_code == 400
        assert response.json() == {"detail": "Duplicate agent ids found in list"}
        assert http.get("/v1/groups/count").json() == 0

    @pytest.mark.parametrize(
        ("buffers", "text"),
        [
            ({"max_message_buffer_length": 10}, "must be provided together"),
            ({"max_message_buffer_length": 10, "min_message_buffer_length": 4}, "must be greater than 4"),
            ({"max_message_buffer_length": 6, "min_message_buffer_length": 6}, "'max_message_buffer_length' must be"),
        ],
    )
    def test_voice_buffer_rules_400(
        self, http: httpx.Client, client: Letta, buffers: dict[str, int], text: str
    ) -> None:
        boss, w = agent_ids(client, "boss", "w")
        config = {"manager_type": "voice_sleeptime", "manager_agent_id": boss, **buffers}
        response = http.post("/v1/groups/", json={"agent_ids": [w], "description": "", "manager_config": config})
        assert response.status_code == 400, response.text
        assert text in response.json()["detail"]
        assert http.get("/v1/groups/count").json() == 0

    def test_valid_voice_buffers(self, http: httpx.Client, client: Letta) -> None:
        boss, w = agent_ids(client, "boss", "w")
        config = {"manager_type": "voice_sleeptime", "manager_agent_id": boss,
                  "max_message_buffer_length": 30, "min_message_buffer_length": 15}  # fmt: skip
        group = create(http, {"agent_ids": [w], "description": "", "manager_config": config})
        assert (group["max_message_buffer_length"], group["min_message_buffer_length"]) == (30, 15)

    def test_swarm_cannot_be_created(self, http: httpx.Client, client: Letta) -> None:
        [w] = agent_ids(client, "w")
        body = {"agent_ids": [w], "description": "", "manager_config": {"manager_type": "swarm"}}
        assert http.post("/v1/groups/", json=body).status_code == 422
        assert http.get("/v1/groups/count").json() == 0

    def test_unknown_manager_agent_404(self, http: httpx.Client, client: Letta) -> None:
        [w] = agent_ids(client, "w")
        body = {"agent_ids": [w], "description": "", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": MISSING_AGENT}}  # fmt: skip
        assert http.post("/v1/groups/", json=body).status_code == 404

    def test_shared_blocks_reach_members_and_manager(self, http: httpx.Client, client: Letta) -> None:
        boss, w = agent_ids(client, "boss", "w")
        block = client.blocks.create(label="team", value="We ship Fridays.")
        body = {"agent_ids": [w], "description": "", "shared_block_ids": [block.id],
                "manager_config": {"manager_type": "supervisor", "manager_agent_id": boss}}  # fmt: skip
        group = create(http, body)
        assert group["shared_block_ids"] == [block.id]
        for agent_id in (boss, w):
            assert block.id in [b.id for b in client.agents.blocks.list(agent_id)]


class TestListGroups:
    def test_defaults_filters_and_cursors(self, http: httpx.Client, client: Letta) -> None:
        boss, a, b = agent_ids(client, "boss", "a", "b")
        first = create(http, {"agent_ids": [a], "description": "1", "project_id": "p1"})["id"]
        second = create(http, {"agent_ids": [b], "description": "2", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": boss}})["id"]  # fmt: skip
        third = create(http, {"agent_ids": [a, b], "description": "3"})["id"]
        assert group_ids(http.get("/v1/groups/")) == [first, second, third]
        assert group_ids(http.get("/v1/groups/", params={"order": "desc"})) == [third, second, first]
        assert group_ids(http.get("/v1/groups/", params={"limit": 2})) == [first, second]
        assert group_ids(http.get("/v1/groups/", params={"after": first})) == [second, third]
        assert group_ids(http.get("/v1/groups/", params={"before": third})) == [first, second]
        assert group_ids(http.get("/v1/groups/", params={"manager_type": "supervisor"})) == [second]
        assert group_ids(http.get("/v1/groups/", params={"project_id": "p1"})) == [first]
        assert http.get("/v1/groups/", params={"manager_type": "bogus"}).status_code == 422

    def test_default_limit_is_50(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        for i in range(51):
            create(http, {"agent_ids": [a], "description": str(i)})
        assert len(group_ids(http.get("/v1/groups/"))) == 50
        assert http.get("/v1/groups/count").json() == 51

    def test_hidden_only_when_asked(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        shown = create(http, {"agent_ids": [a], "description": ""})["id"]
        hidden = create(http, {"agent_ids": [a], "description": "", "hidden": True})["id"]
        assert group_ids(http.get("/v1/groups/")) == [shown]
        assert group_ids(http.get("/v1/groups/", params={"show_hidden_groups": True})) == [shown, hidden]
        assert http.get("/v1/groups/count").json() == 2


class TestListGroupsForAgent:
    def test_participant_groups_newest_first(self, http: httpx.Client, client: Letta) -> None:
        boss, a, b = agent_ids(client, "boss", "a", "b")
        older = create(http, {"agent_ids": [a], "description": ""})["id"]
        managed = create(http, {"agent_ids": [a, b], "description": "", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": boss}})["id"]  # fmt: skip
        create(http, {"agent_ids": [b], "description": ""})
        assert group_ids(http.get(f"/v1/agents/{a}/groups")) == [managed, older]
        assert group_ids(http.get(f"/v1/agents/{a}/groups", params={"order": "asc"})) == [older, managed]
        assert group_ids(http.get(f"/v1/agents/{a}/groups", params={"manager_type": "supervisor"})) == [managed]
        assert group_ids(http.get(f"/v1/agents/{boss}/groups")) == []

    def test_default_limit_is_100(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        for i in range(101):
            create(http, {"agent_ids": [a], "description": str(i)})
        assert len(group_ids(http.get(f"/v1/agents/{a}/groups"))) == 100

    def test_unknown_agent_404(self, http: httpx.Client) -> None:
        assert http.get(f"/v1/agents/{MISSING_AGENT}/groups").status_code == 404


class TestRetrieveGroup:
    def test_unknown_404_and_malformed_422(self, http: httpx.Client) -> None:
        response = http.get(f"/v1/groups/{MISSING_GROUP}")
        assert response.status_code == 404
        assert response.json() == {"detail": f"Group with ID {MISSING_GROUP} not found"}
        assert http.get("/v1/groups/not-a-group").status_code == 422


class TestModifyGroup:
    def test_pattern_change_400_letta_text(self, http: httpx.Client, client: Letta) -> None:
        boss, a = agent_ids(client, "boss", "a")
        group = create(http, {"agent_ids": [a], "description": "d"})
        body = {"manager_config": {"manager_type": "supervisor", "manager_agent_id": boss}}
        response = http.patch(f"/v1/groups/{group['id']}", json=body)
        assert response.status_code == 400
        assert response.json() == {"detail": "Cannot change group pattern after creation"}
        assert http.get(f"/v1/groups/{group['id']}").json()["manager_type"] == "round_robin"

    def test_truthy_values_apply_agent_ids_replace(self, http: httpx.Client, client: Letta) -> None:
        a, b, c = agent_ids(client, "a", "b", "c")
        group = create(
            http,
            {
                "agent_ids": [a, b],
                "description": "old",
                "manager_config": {"manager_type": "round_robin", "max_turns": 4},
            },
        )
        body = {"description": "", "agent_ids": [c, a], "manager_config": {"manager_type": "round_robin"}}
        updated = http.patch(f"/v1/groups/{group['id']}", json=body).json()
        assert (updated["description"], updated["agent_ids"], updated["max_turns"]) == ("old", [c, a], 4)
        updated = http.patch(f"/v1/groups/{group['id']}", json={"description": "new", "agent_ids": []}).json()
        assert (updated["description"], updated["agent_ids"]) == ("new", [c, a])

    def test_sleeptime_frequency(self, http: httpx.Client, client: Letta) -> None:
        boss, a = agent_ids(client, "boss", "a")
        group = create(http, {"agent_ids": [a], "description": "", "manager_config": {
            "manager_type": "sleeptime", "manager_agent_id": boss}})  # fmt: skip
        assert (group["sleeptime_agent_frequency"], group["turns_counter"]) == (None, None)
        body = {"manager_config": {"manager_type": "sleeptime", "sleeptime_agent_frequency": 1}}
        updated = http.patch(f"/v1/groups/{group['id']}", json=body).json()
        assert (updated["sleeptime_agent_frequency"], updated["turns_counter"], updated["manager_agent_id"]) == (
            1,
            -1,
            boss,
        )

    def test_missing_agent_404_nothing_changed(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        group = create(http, {"agent_ids": [a], "description": "d"})
        response = http.patch(f"/v1/groups/{group['id']}", json={"agent_ids": [MISSING_AGENT]})
        assert response.status_code == 404
        assert response.json()["detail"] == f"Items not found in agents: {{'{MISSING_AGENT}'}}"
        assert http.get(f"/v1/groups/{group['id']}").json()["agent_ids"] == [a]

    def test_voice_buffer_rule_on_patch_400(self, http: httpx.Client, client: Letta) -> None:
        boss, a = agent_ids(client, "boss", "a")
        config = {"manager_type": "voice_sleeptime", "manager_agent_id": boss,
                  "max_message_buffer_length": 30, "min_message_buffer_length": 15}  # fmt: skip
        group = create(http, {"agent_ids": [a], "description": "", "manager_config": config})
        body = {"manager_config": {"manager_type": "voice_sleeptime", "min_message_buffer_length": 40}}
        assert http.patch(f"/v1/groups/{group['id']}", json=body).status_code == 400


class TestDeleteGroup:
    def test_message_body_and_gone(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        group_id = create(http, {"agent_ids": [a], "description": ""})["id"]
        response = http.delete(f"/v1/groups/{group_id}")
        assert response.status_code == 200
        assert response.json() == {"message": f"Group id={group_id} successfully deleted"}
        assert http.get(f"/v1/groups/{group_id}").status_code == 404
        assert client.agents.retrieve(a).id == a
        assert http.delete(f"/v1/groups/{group_id}").status_code == 404


class TestManagerAgentDeletion:
    def test_deleting_a_manager_409_then_ok_after_group_deleted(self, http: httpx.Client, client: Letta) -> None:
        boss, a = agent_ids(client, "boss", "a")
        group_id = create(http, {"agent_ids": [a], "description": "", "manager_config": {
            "manager_type": "supervisor", "manager_agent_id": boss}})["id"]  # fmt: skip
        response = http.delete(f"/v1/agents/{boss}")
        assert response.status_code == 409, response.text
        assert "groups" in response.json()["detail"]
        assert client.agents.retrieve(boss).id == boss
        http.delete(f"/v1/groups/{group_id}")
        assert http.delete(f"/v1/agents/{boss}").status_code == 200

    def test_deleting_a_participant_drops_it_from_the_group(self, http: httpx.Client, client: Letta) -> None:
        a, b = agent_ids(client, "a", "b")
        group_id = create(http, {"agent_ids": [a, b], "description": ""})["id"]
        client.agents.delete(a)
        assert http.get(f"/v1/groups/{group_id}").json()["agent_ids"] == [b]


VOICE_BUFFERS = {"max_message_buffer_length": 30, "min_message_buffer_length": 15}


class TestVoiceSleeptimeDeletion:
    """As Letta: a voice_sleeptime group is an agent's sleeptime side, deleted with its manager or its worker."""

    def voice_group(self, http: httpx.Client, boss: str, *participants: str, pattern: str = "voice_sleeptime") -> str:
        config = {"manager_type": pattern, "manager_agent_id": boss}
        if pattern == "voice_sleeptime":
            config.update(VOICE_BUFFERS)
        return str(create(http, {"agent_ids": list(participants), "description": "", "manager_config": config})["id"])

    def test_deleting_the_manager_deletes_the_group_and_participants(self, http: httpx.Client, client: Letta) -> None:
        boss, w, other = agent_ids(client, "boss", "w", "other")
        group_id = self.voice_group(http, boss, w)
        response = http.delete(f"/v1/agents/{boss}")
        assert response.status_code == 200, response.text
        assert http.get(f"/v1/groups/{group_id}").status_code == 404
        assert [a.id for a in client.agents.list()] == [other]

    def test_deleting_its_sleeptime_agent_deletes_the_group(self, http: httpx.Client, client: Letta) -> None:
        [boss] = agent_ids(client, "boss")
        worker = client.agents.create(name="w", agent_type="sleeptime_agent", model=MODEL, embedding=EMBEDDING)
        group_id = self.voice_group(http, boss, worker.id)
        assert http.delete(f"/v1/agents/{worker.id}").status_code == 200
        assert http.get(f"/v1/groups/{group_id}").status_code == 404
        assert client.agents.retrieve(boss).enable_sleeptime is None
        assert http.delete(f"/v1/agents/{boss}").status_code == 200

    @pytest.mark.parametrize("pattern", ["voice_sleeptime", "sleeptime"])
    def test_deleting_a_plain_participant_keeps_the_group(
        self, http: httpx.Client, client: Letta, pattern: str
    ) -> None:
        # Only a sleeptime-type worker takes the group with it (Letta checks the deleted agent's type).
        boss, w = agent_ids(client, "boss", "w")
        group_id = self.voice_group(http, boss, w, pattern=pattern)
        assert http.delete(f"/v1/agents/{w}").status_code == 200
        assert http.get(f"/v1/groups/{group_id}").json()["agent_ids"] == []


class TestGroupBlocks:
    def test_attach_links_group_only_and_detach(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        group_id = create(http, {"agent_ids": [a], "description": ""})["id"]
        block = client.blocks.create(label="team", value="v")
        response = http.patch(f"/v1/groups/{group_id}/blocks/attach/{block.id}")
        assert (response.status_code, response.json()) == (200, None)
        http.patch(f"/v1/groups/{group_id}/blocks/attach/{block.id}")
        assert http.get(f"/v1/groups/{group_id}").json()["shared_block_ids"] == [block.id]
        assert block.id not in [b.id for b in client.agents.blocks.list(a)]
        response = http.patch(f"/v1/groups/{group_id}/blocks/detach/{block.id}")
        assert (response.status_code, response.json()) == (200, None)
        assert http.get(f"/v1/groups/{group_id}").json()["shared_block_ids"] == []

    def test_unknown_block_404_bad_id_400_unknown_group_404(self, http: httpx.Client, client: Letta) -> None:
        [a] = agent_ids(client, "a")
        group_id = create(http, {"agent_ids": [a], "description": ""})["id"]
        assert http.patch(f"/v1/groups/{group_id}/blocks/attach/{MISSING_BLOCK}").status_code == 404
        assert http.patch(f"/v1/groups/{group_id}/blocks/attach/nope").status_code == 400
        assert http.patch(f"/v1/groups/{MISSING_GROUP}/blocks/detach/{MISSING_BLOCK}").status_code == 404
