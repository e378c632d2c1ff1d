"""Agent files carry the group an agent manages, both ways: a sleeptime-enabled agent exports with its sleeptime
agent and its group, and imports with the group mapped onto the new agents, firing as the original did."""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.agent_files_support import EMBEDDING, MODEL, export, import_bytes, v2
from tests.api.sleeptime_support import SLEEPTIME_PROMPT_MARK, groups, make_main, say, sleeptime_of, wait_all_ended
from tests.mock_llm import MockLLM


@pytest.fixture(autouse=True)
def sleeptime_replies_apart(server: object, mock_llm: MockLLM) -> None:
    """The sleeptime agent's requests answer from their own queue, never with a reply meant for the main agent."""
    mock_llm.script_when(SLEEPTIME_PROMPT_MARK)


def _supervised(client: Letta, http: httpx.Client) -> tuple[str, str, dict[str, Any]]:
    boss, worker = (client.agents.create(name=n, model=MODEL, embedding=EMBEDDING) for n in ("boss", "worker"))
    team = client.blocks.create(label="team", value="boss and worker")
    body = {
        "agent_ids": [worker.id],
        "description": "boss and worker",
        "manager_config": {"manager_type": "supervisor", "manager_agent_id": boss.id},
        "shared_block_ids": [team.id],  # attached to both agents
    }
    response = http.post("/v1/groups/", json=body)
    assert response.status_code == 200, response.text
    return boss.id, worker.id, response.json()


class TestExport:
    def test_a_sleeptime_agent_comes_with_its_sleeptime_agent_and_group(
        self, client: Letta, http: httpx.Client
    ) -> None:
        main = make_main(client)
        document = export(http, main.id)
        main_entry, helper_entry = document["agents"]
        assert (main_entry["id"], main_entry["name"]) == ("agent-0", "main")
        assert (helper_entry["name"], helper_entry["agent_type"]) == ("main-sleeptime", "sleeptime_agent")
        (group,) = document["groups"]
        assert group["agent_ids"] == [helper_entry["id"]]
        assert group["manager_config"] == {
            "manager_type": "sleeptime",
            "manager_agent_id": "agent-0",
            "sleeptime_agent_frequency": 5,
        }
        assert main_entry["group_ids"] == [group["id"]] and helper_entry["group_ids"] == []
        assert [a["enable_sleeptime"] for a in document["agents"]] == [False, False]  # as Letta writes it
        # The blocks both agents hold are written once.
        assert sorted(b["label"] for b in document["blocks"]) == ["human", "memory_persona", "persona"]
        assert set(main_entry["block_ids"]) < set(helper_entry["block_ids"])

    def test_a_member_exports_alone(self, client: Letta, http: httpx.Client) -> None:
        boss_id, worker_id, _ = _supervised(client, http)
        document = export(http, boss_id)
        assert [a["name"] for a in document["agents"]] == ["boss", "worker"]
        assert document["groups"][0]["manager_config"] == {"manager_type": "supervisor", "manager_agent_id": "agent-0"}
        alone = export(http, worker_id)
        assert [a["name"] for a in alone["agents"]] == ["worker"] and alone["groups"] == []


class TestImport:
    def test_the_imported_main_agent_fires_its_imported_sleeptime_agent(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        main = make_main(client)
        original = sleeptime_of(client, main)
        document = export(http, main.id)
        new_main, new_helper = import_bytes(client, json.dumps(document).encode(), model=MODEL, embedding=EMBEDDING)
        assert client.agents.retrieve(new_main).enable_sleeptime is True
        (group,) = [g for g in groups(http) if g["manager_agent_id"] == new_main]
        assert (group["manager_type"], group["agent_ids"]) == ("sleeptime", [new_helper])
        assert (group["sleeptime_agent_frequency"], group["turns_counter"]) == (5, -1)
        helper = client.agents.retrieve(new_helper, include=["agent.blocks"])
        assert {b.id for b in client.agents.blocks.list(new_main)} < {b.id for b in helper.blocks}
        say(client, mock_llm, new_main, "hello")
        (run,) = wait_all_ended(client, new_helper, 1)
        assert run.status == "completed"
        assert not list(client.runs.list(agent_ids=[original.id]))

    def test_a_supervisor_group_is_mapped_onto_the_new_agents(self, client: Letta, http: httpx.Client) -> None:
        boss_id, _, original = _supervised(client, http)
        document = export(http, boss_id)
        (team,) = [b["id"] for b in document["blocks"] if b["label"] == "team"]
        assert document["groups"][0]["shared_block_ids"] == [team]
        new_boss, new_worker = import_bytes(client, json.dumps(document).encode(), model=MODEL)
        (group,) = [g for g in groups(http) if g["manager_agent_id"] == new_boss]
        assert (group["manager_type"], group["agent_ids"], group["description"]) == (
            "supervisor",
            [new_worker],
            "boss and worker",
        )
        assert not client.agents.retrieve(new_boss).enable_sleeptime
        (copy,) = [b.id for b in client.agents.blocks.list(new_boss) if b.label == "team"]
        assert group["shared_block_ids"] == [copy] != original["shared_block_ids"]
        assert copy in {b.id for b in client.agents.blocks.list(new_worker)}

    def test_a_manager_outside_the_file_is_refused(self, http: httpx.Client) -> None:
        data = v2()
        config = {"manager_type": "supervisor", "manager_agent_id": "agent-9"}
        data["groups"] = [{"id": "group-0", "agent_ids": ["agent-0"], "description": "", "manager_config": config}]
        response = http.post("/v1/agents/import", files={"file": ("a.af", json.dumps(data).encode(), "text/json")})
        assert response.status_code == 400
        assert "groups.0.manager_config.manager_agent_id" in response.json()["detail"]
        assert groups(http) == []
