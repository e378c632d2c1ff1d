"""Import options and what a file keeps without them: secret values, a folder's own embedding config; an agent
file with no agent; the order of an export's tools and blocks."""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.agent_files_support import EMBEDDING, MODEL, export, import_bytes, raw, v2, wait_files


def _secrets(client: Letta, agent_id: str) -> dict[str, Any]:
    agent = client.agents.retrieve(agent_id, include=["agent.secrets"])
    return {s.key: s.value for s in agent.secrets}


class TestSecrets:
    def test_the_files_values_stay_unless_secrets_are_sent(self, client: Letta) -> None:
        data = v2()
        values = {"API_KEY": "from-file", "EMPTY": None}
        data["agents"][0]["secrets"] = data["agents"][0]["tool_exec_environment_variables"] = values
        (kept,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
        assert _secrets(client, kept) == {"API_KEY": "from-file", "EMPTY": ""}
        sent = json.dumps({"EMPTY": "sent"})
        (replaced,) = import_bytes(client, json.dumps(data).encode(), model=MODEL, secrets=sent)
        assert _secrets(client, replaced) == {"API_KEY": "", "EMPTY": "sent"}  # as Letta: sent values replace all


class TestFolderEmbedding:
    def test_a_source_keeps_its_own_config_without_an_override(self, client: Letta) -> None:
        config = client.folders.create(name="probe", embedding=EMBEDDING).embedding_config.model_dump(mode="json")
        data = json.loads(raw("test_agent_with_files_and_sources.af"))
        data["agents"][0]["embedding_config"] = config
        data["sources"][0]["embedding_config"] = {**config, "embedding_chunk_size": config["embedding_chunk_size"] + 7}
        (agent_id,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
        (folder,) = client.agents.folders.list(agent_id)
        assert folder.embedding_config.embedding_chunk_size == config["embedding_chunk_size"] + 7
        assert {f.processing_status for f in wait_files(client, folder.id)} == {"completed"}


class TestExportOrder:
    def test_blocks_by_label_and_tools_by_name_numbered_as_the_agent_names_them(
        self, client: Letta, http: httpx.Client
    ) -> None:
        labels = ["zeta", "alpha", "middle"]
        agent = client.agents.create(
            name="ordered", model=MODEL, embedding=EMBEDDING, memory_blocks=[{"label": x, "value": x} for x in labels]
        )
        source = 'def aardvark() -> str:\n    """First by name.\n    """\n    return "a"\n'
        client.agents.tools.attach(client.tools.create(source_code=source).id, agent_id=agent.id)
        document = export(http, agent.id)
        assert [b["label"] for b in document["blocks"]] == sorted(labels)
        by_id = {b["id"]: b["label"] for b in document["blocks"]}
        assert [by_id[i] for i in document["agents"][0]["block_ids"]] == labels  # block-0 is zeta
        names = [t["name"] for t in document["tools"]]
        assert names == sorted(names) and names[0] == "aardvark"
        assert document["agents"][0]["tool_ids"][-1] == document["tools"][0]["id"]  # attached last


def test_a_file_with_no_agent_imports_none(client: Letta, http: httpx.Client) -> None:
    data = {**v2(), "agents": []}  # as Letta: a 200 with no agent ids (the file's other rows are still made)
    response = http.post("/v1/agents/import", files={"file": ("a.af", json.dumps(data).encode(), "text/json")})
    assert response.status_code == 200, response.text
    assert response.json() == {"agent_ids": []}
