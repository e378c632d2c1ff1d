"""Letta's ``/v1/_internal_templates`` (template deployments) through httpx against the live server: letta-client
has no methods for internal routes (its ``client.templates`` is Letta Cloud's ``/v1/templates``), so the SDK only
checks what a deployment left behind."""

from typing import Any

import httpx
import pytest
from letta_client import Letta, NotFoundError

from tests.api.test_core_memory_api import system_prompt
from tests.api.test_folders_api import wait_done

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
BASE = "/v1/_internal_templates"


def stamp(deployment: str, entity: str) -> dict[str, str]:
    return {
        "template_id": "tpl-v2",
        "base_template_id": "tpl",
        "deployment_id": deployment,
        "entity_id": entity,
    }


def deploy_block(http: httpx.Client, deployment: str, label: str, **extra: Any) -> dict[str, Any]:
    body = {"label": label, "value": f"{label} value"} | stamp(deployment, f"ent-{label}") | extra
    resp = http.post(f"{BASE}/blocks", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def deploy_agent(http: httpx.Client, deployment: str, name: str, **extra: Any) -> dict[str, Any]:
    body = {"name": name, "model": MODEL, "embedding": EMBEDDING} | stamp(deployment, f"ent-{name}") | extra
    resp = http.post(f"{BASE}/agents", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def deploy_group(http: httpx.Client, deployment: str, agents: list[str], **extra: Any) -> dict[str, Any]:
    body = {"agent_ids": agents, "description": f"group of {deployment}"} | stamp(deployment, "") | extra
    del body["entity_id"]
    resp = http.post(f"{BASE}/groups", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def supervised_by(agent_id: str) -> dict[str, Any]:
    return {"manager_config": {"manager_type": "supervisor", "manager_agent_id": agent_id}}


def entities(http: httpx.Client, deployment: str, **params: Any) -> dict[str, Any]:
    resp = http.get(f"{BASE}/deployment/{deployment}", params=params)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


class TestCreateAgent:
    def test_stamps_template_and_deployment(self, http: httpx.Client, client: Letta) -> None:
        agent = deploy_agent(http, "dep-1", "deployed", description="from a template")
        assert agent["id"].startswith("agent-") and agent["name"] == "deployed"
        stamped = {k: agent[k] for k in ("template_id", "base_template_id", "deployment_id", "entity_id")}
        assert stamped == stamp("dep-1", "ent-deployed")
        stored = client.agents.retrieve(agent["id"])
        assert (stored.deployment_id, stored.entity_id, stored.template_id) == ("dep-1", "ent-deployed", "tpl-v2")

    def test_unknown_tools_are_left_out(self, http: httpx.Client) -> None:
        body = {"tools": ["no_such_tool"], "include_base_tools": False}
        agent = deploy_agent(http, "dep-1", "toolless", **body)
        assert [t["name"] for t in agent["tools"]] == []
        public = http.post("/v1/agents/", json={"name": "strict", "model": MODEL, "embedding": EMBEDDING} | body)
        assert public.status_code == 400  # Letta: "Tools not found by name: {...}"

    def test_uses_given_blocks(self, http: httpx.Client) -> None:
        block = deploy_block(http, "dep-1", "persona")
        agent = deploy_agent(http, "dep-1", "holder", block_ids=[block["id"]])
        assert [b["id"] for b in agent["memory"]["blocks"]] == [block["id"]]

    def test_attaches_template_folders_with_their_files(self, http: httpx.Client, client: Letta) -> None:
        folder = client.folders.create(name="docs", embedding=EMBEDDING)
        uploaded = client.folders.files.upload(folder.id, file=("notes.txt", b"The code is PELICAN-42.", "text/plain"))
        assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"
        agent = deploy_agent(http, "dep-1", "reader", folder_ids=[folder.id])
        assert [s["id"] for s in agent["sources"]] == [folder.id]
        assert {"open_files", "grep_files"} <= {t["name"] for t in agent["tools"]}
        files = client.agents.files.list(agent["id"]).files
        assert [f.file_name for f in files] == ["docs/notes.txt"]

    def test_unknown_folder_is_404_and_creates_nothing(self, http: httpx.Client) -> None:
        missing = "source-00000000-0000-4000-8000-000000000000"
        body = {"name": "x", "model": MODEL, "embedding": EMBEDDING, "folder_ids": [missing]} | stamp("dep-1", "e")
        assert http.post(f"{BASE}/agents", json=body).status_code == 404
        assert http.get("/v1/agents/").json() == []

    @pytest.mark.parametrize("missing", ["deployment_id", "entity_id", "template_id", "base_template_id"])
    def test_missing_stamp_is_422(self, http: httpx.Client, missing: str) -> None:
        body = {"name": "x", "model": MODEL, "embedding": EMBEDDING} | stamp("dep-1", "e")
        del body[missing]
        resp = http.post(f"{BASE}/agents", json=body)
        assert resp.status_code == 422
        assert missing in str(resp.json()["detail"])
        assert http.get("/v1/agents/").json() == []

    def test_without_model_is_400(self, http: httpx.Client) -> None:
        resp = http.post(f"{BASE}/agents", json={"name": "x"} | stamp("dep-1", "e"))
        assert resp.status_code == 400
        assert "model" in resp.json()["detail"]


class TestCreateBlock:
    def test_stamps_template_and_deployment(self, http: httpx.Client, client: Letta) -> None:
        block = deploy_block(http, "dep-1", "human", template_name="Human", description="who", tags=["t"])
        assert block["id"].startswith("block-") and block["value"] == "human value"
        assert {k: block[k] for k in ("template_id", "base_template_id", "deployment_id", "entity_id")} == stamp(
            "dep-1", "ent-human"
        )
        stored = client.blocks.retrieve(block["id"])
        assert (stored.deployment_id, stored.entity_id, stored.template_name) == ("dep-1", "ent-human", "Human")

    def test_missing_deployment_is_422(self, http: httpx.Client) -> None:
        body = {"label": "human", "value": "v"} | stamp("dep-1", "e")
        del body["deployment_id"]
        resp = http.post(f"{BASE}/blocks", json=body)
        assert resp.status_code == 422
        assert "deployment_id" in str(resp.json()["detail"])

    def test_over_limit_is_400(self, http: httpx.Client, client: Letta) -> None:
        body = {"label": "human", "value": "x" * 12, "limit": 10} | stamp("dep-1", "e")
        resp = http.post(f"{BASE}/blocks", json=body)
        assert resp.status_code == 400
        assert "10" in resp.json()["detail"]
        assert list(client.blocks.list()) == []


class TestCreateBlocksBatch:
    def test_creates_in_order(self, http: httpx.Client, client: Letta) -> None:
        body = [{"label": label, "value": label} | stamp("dep-1", f"ent-{label}") for label in ("a", "b", "c")]
        resp = http.post(f"{BASE}/blocks/batch", json=body)
        assert resp.status_code == 200, resp.text
        created = resp.json()
        assert [(b["label"], b["entity_id"], b["deployment_id"]) for b in created] == [
            ("a", "ent-a", "dep-1"),
            ("b", "ent-b", "dep-1"),
            ("c", "ent-c", "dep-1"),
        ]
        assert {b.id for b in client.blocks.list()} == {b["id"] for b in created}

    def test_one_bad_block_creates_none(self, http: httpx.Client, client: Letta) -> None:
        body = [
            {"label": "ok", "value": "fine"} | stamp("dep-1", "e1"),
            {"label": "big", "value": "x" * 12, "limit": 10} | stamp("dep-1", "e2"),
        ]
        assert http.post(f"{BASE}/blocks/batch", json=body).status_code == 400
        assert list(client.blocks.list()) == []

    def test_not_a_list_is_422(self, http: httpx.Client) -> None:
        resp = http.post(f"{BASE}/blocks/batch", json={"label": "a", "value": "a"} | stamp("dep-1", "e"))
        assert resp.status_code == 422
        assert "detail" in resp.json()

    def test_empty_list_creates_nothing(self, http: httpx.Client) -> None:
        resp = http.post(f"{BASE}/blocks/batch", json=[])
        assert resp.status_code == 200 and resp.json() == []


class TestCreateGroup:
    def test_stamps_template_and_deployment(self, http: httpx.Client) -> None:
        boss = deploy_agent(http, "dep-1", "boss")["id"]
        worker = deploy_agent(http, "dep-1", "worker")["id"]
        group = deploy_group(http, "dep-1", [worker], **supervised_by(boss))
        assert group["id"].startswith("group-")
        assert (group["manager_type"], group["manager_agent_id"], group["agent_ids"]) == ("supervisor", boss, [worker])
        assert (group["template_id"], group["base_template_id"], group["deployment_id"]) == ("tpl-v2", "tpl", "dep-1")
        stored = http.get(f"/v1/groups/{group['id']}").json()
        assert stored["deployment_id"] == "dep-1" and stored["description"] == "group of dep-1"

    def test_missing_deployment_is_422(self, http: httpx.Client) -> None:
        worker = deploy_agent(http, "dep-1", "worker")["id"]
        body = {"agent_ids": [worker], "description": "d", "template_id": "t", "base_template_id": "b"}
        resp = http.post(f"{BASE}/groups", json=body)
        assert resp.status_code == 422
        assert "deployment_id" in str(resp.json()["detail"])

    def test_unknown_agent_is_404(self, http: httpx.Client) -> None:
        missing = "agent-00000000-0000-4000-8000-000000000000"
        resp = http.post(f"{BASE}/groups", json={"agent_ids": [missing], "description": "d"} | stamp("dep-1", ""))
        assert resp.status_code == 404
        assert missing in resp.json()["detail"]
        assert entities(http, "dep-1")["total_count"] == 0


class TestListDeploymentEntities:
    def test_lists_blocks_then_agents_in_letta_shape(self, http: httpx.Client) -> None:
        block = deploy_block(http, "dep-1", "human", template_name="Human", description="who", project_id="p1")
        plain = deploy_block(http, "dep-1", "notes")
        agent = deploy_agent(http, "dep-1", "bot", description="helper")
        group = deploy_group(http, "dep-1", [agent["id"]], project_id="p2")
        deploy_agent(http, "dep-2", "elsewhere")
        http.post("/v1/blocks/", json={"label": "human", "value": "not deployed"})
        listed = entities(http, "dep-1")
        assert listed["deployment_id"] == "dep-1" and listed["total_count"] == 4
        assert listed["message"] == "Found 4 entities for deployment dep-1"
        assert listed["entities"] == [
            {
                "id": block["id"],
                "type": "block",
                "name": "Human",
                "description": "who",
                "entity_id": "ent-human",
                "project_id": "p1",
            },
            {
                "id": plain["id"],
                "type": "block",
                "name": "notes",
                "description": None,
                "entity_id": "ent-notes",
                "project_id": None,
            },
            {
                "id": agent["id"],
                "type": "agent",
                "name": "bot",
                "description": "helper",
                "entity_id": "ent-bot",
                "project_id": None,
            },
            {
                "id": group["id"],
                "type": "group",
                "name": None,
                "description": "group of dep-1",
                "entity_id": None,
                "project_id": "p2",
            },
        ]

    def test_filters_by_entity_types(self, http: httpx.Client) -> None:
        block = deploy_block(http, "dep-1", "human")
        agent = deploy_agent(http, "dep-1", "bot")
        only_agents = entities(http, "dep-1", entity_types=["agent"])
        assert [e["id"] for e in only_agents["entities"]] == [agent["id"]]
        assert only_agents["message"] == "Found 1 entities for deployment dep-1 (filtered by types: agent)"
        both = entities(http, "dep-1", entity_types=["Agent", "block"])
        assert [e["id"] for e in both["entities"]] == [block["id"], agent["id"]]
        comma = entities(http, "dep-1", entity_types="agent, BLOCK")
        assert [e["id"] for e in comma["entities"]] == [block["id"], agent["id"]]
        assert comma["message"].endswith("(filtered by types: block, agent)")
        group = deploy_group(http, "dep-1", [agent["id"]])
        only_groups = entities(http, "dep-1", entity_types=["group"])
        assert [(e["id"], e["type"]) for e in only_groups["entities"]] == [(group["id"], "group")]

    def test_unknown_types_mean_all(self, http: httpx.Client) -> None:
        deploy_block(http, "dep-1", "human")
        deploy_agent(http, "dep-1", "bot")
        listed = entities(http, "dep-1", entity_types=["tool"])
        assert listed["total_count"] == 2
        assert listed["message"] == "Found 2 entities for deployment dep-1 (filtered by types: block, agent, group)"

    def test_unknown_deployment_is_empty(self, http: httpx.Client) -> None:
        deploy_agent(http, "dep-1", "bot")
        assert entities(http, "nope") == {
            "entities": [],
            "total_count": 0,
            "deployment_id": "nope",
            "message": "Found 0 entities for deployment nope",
        }


class TestDeleteDeployment:
    def test_deletes_the_deployment_only(self, http: httpx.Client, client: Letta) -> None:
        blocks = http.post(
            f"{BASE}/blocks/batch",
            json=[{"label": label, "value": label} | stamp("dep-1", label) for label in ("human", "persona")],
        ).json()
        agent = deploy_agent(http, "dep-1", "bot", block_ids=[b["id"] for b in blocks])
        boss = deploy_agent(http, "dep-1", "boss")
        group = deploy_group(http, "dep-1", [agent["id"]], **supervised_by(boss["id"]))
        kept_block = deploy_block(http, "dep-2", "human")
        kept_agent = deploy_agent(http, "dep-2", "other", block_ids=[kept_block["id"]])
        kept_group = deploy_group(http, "dep-2", [kept_agent["id"], agent["id"]])
        plain = client.blocks.create(label="notes", value="not deployed")

        resp = http.delete(f"{BASE}/deployment/dep-1")
        assert resp.status_code == 200, resp.text
        assert resp.json() == {
            "deleted_blocks": [b["id"] for b in blocks],
            "deleted_agents": [agent["id"], boss["id"]],
            "deleted_groups": [group["id"]],
            "message": "Successfully deleted 5 entities from deployment dep-1",
        }
        for agent_id in (agent["id"], boss["id"]):
            with pytest.raises(NotFoundError):
                client.agents.retrieve(agent_id)
        assert http.get(f"/v1/groups/{group['id']}").status_code == 404
        assert http.get(f"/v1/groups/{kept_group['id']}").json()["agent_ids"] == [kept_agent["id"]]
        for block in blocks:
            with pytest.raises(NotFoundError):
                client.blocks.retrieve(block["id"])
        assert entities(http, "dep-1")["total_count"] == 0
        assert client.agents.retrieve(kept_agent["id"]).deployment_id == "dep-2"
        assert client.blocks.retrieve(kept_block["id"]).deployment_id == "dep-2"
        assert client.blocks.retrieve(plain.id).value == "not deployed"
        assert entities(http, "dep-2")["total_count"] == 3

    def test_manager_of_another_deployments_group_is_kept(self, http: httpx.Client, client: Letta) -> None:
        boss = deploy_agent(http, "dep-1", "boss")
        block = deploy_block(http, "dep-1", "human")
        worker = deploy_agent(http, "dep-2", "worker")
        other_group = deploy_group(http, "dep-2", [worker["id"]], **supervised_by(boss["id"]))
        resp = http.delete(f"{BASE}/deployment/dep-1")
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert (body["deleted_agents"], body["deleted_blocks"]) == ([], [block["id"]])
        assert body["message"] == "Successfully deleted 1 entities from deployment dep-1"
        assert client.agents.retrieve(boss["id"]).deployment_id == "dep-1"
        assert http.get(f"/v1/groups/{other_group['id']}").json()["manager_agent_id"] == boss["id"]

    def test_block_held_by_outside_agent_leaves_its_memory(
        self, http: httpx.Client, client: Letta, pg_uri: str
    ) -> None:
        block = deploy_block(http, "dep-1", "shared", value="deployed fact")
        outsider = client.agents.create(name="outsider", model=MODEL, embedding=EMBEDDING, block_ids=[block["id"]])
        assert "deployed fact" in system_prompt(pg_uri, outsider.id)
        assert http.delete(f"{BASE}/deployment/dep-1").json()["deleted_blocks"] == [block["id"]]
        assert [b.label for b in client.agents.blocks.list(outsider.id)] == []
        assert "deployed fact" not in system_prompt(pg_uri, outsider.id)

    def test_unknown_deployment_deletes_nothing(self, http: httpx.Client) -> None:
        agent = deploy_agent(http, "dep-1", "bot")
        resp = http.delete(f"{BASE}/deployment/nope")
        assert resp.status_code == 200
        assert resp.json() == {
            "deleted_blocks": [],
            "deleted_agents": [],
            "deleted_groups": [],
            "message": "Successfully deleted 0 entities from deployment nope",
        }
        assert http.get(f"/v1/agents/{agent['id']}").status_code == 200
