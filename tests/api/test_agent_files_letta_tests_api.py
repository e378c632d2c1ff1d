"""What Letta 0.16.8's agent-file serialization tests (tests/test_agent_serialization_v2.py) pin down, seen
through the REST API with letta-client: the export's schema revision and file-local ids, how its files, folders
and messages point at each other, and the smallest file that imports."""

import json
import re
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.agent_files_support import EMBEDDING, EXPECTED, MODEL, export, import_bytes, raw, wait_files
from tests.mock_llm import MockLLM, Reply


def _numbered(entity_id: str, prefix: str) -> bool:
    return re.fullmatch(rf"{prefix}-\d+", entity_id) is not None


def _agent_with_a_folder(client: Letta) -> str:
    folder = client.folders.create(name="notes", embedding=EMBEDDING)
    for name in ("a.txt", "b.txt"):
        client.folders.files.upload(folder.id, file=(name, f"about {name}".encode(), "text/plain"))
    wait_files(client, folder.id)
    agent = client.agents.create(
        name="filer",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "human", "value": "Name: Ada"}],
        secrets={"API_KEY": "super-secret-api-key"},
    )
    client.agents.folders.attach(folder.id, agent_id=agent.id)
    return agent.id


def test_an_export_names_letta_schema_revision(client: Letta, http: httpx.Client) -> None:
    document = export(http, _agent_with_a_folder(client))
    revision = document["metadata"]["revision_id"]  # Letta: its latest database revision, 12 hex digits
    assert re.fullmatch(r"[0-9a-f]{12}", revision) and document["metadata"] == {"revision_id": revision}


def test_every_id_is_file_local_and_references_agree(client: Letta, http: httpx.Client) -> None:
    document = export(http, _agent_with_a_folder(client))
    (agent,) = document["agents"]
    assert agent["id"] == "agent-0"
    assert all(_numbered(m["id"], "message") and m["agent_id"] == "agent-0" for m in agent["messages"])
    assert set(agent["in_context_message_ids"]) <= {m["id"] for m in agent["messages"]}
    for key, prefix in (("tools", "tool"), ("blocks", "block"), ("files", "file"), ("sources", "source")):
        assert document[key] and all(_numbered(entry["id"], prefix) for entry in document[key])
    assert set(agent["tool_ids"]) == {t["id"] for t in document["tools"]}
    assert set(agent["block_ids"]) == {b["id"] for b in document["blocks"]}
    letta_block = json.loads(raw("test_basic_agent_with_blocks_tools_messages_v2.af"))["blocks"][0]
    assert {*letta_block, "tags"} == set(document["blocks"][0])  # Letta 0.16.8 also writes `tags` (null)
    letta_agent = json.loads(raw("test_basic_agent_with_blocks_tools_messages_v2.af"))["agents"][0]
    newer = {"folder_ids", "model_settings", "compaction_settings", "parallel_tool_calls"}  # 0.16.8's own fields
    assert {*letta_agent, *newer} == set(agent)
    (source,) = document["sources"]
    assert agent["source_ids"] == [source["id"]] and {f["source_id"] for f in document["files"]} == {source["id"]}
    files = {f["id"]: f for f in document["files"]}
    assert len(files) == 2 and sorted(f["content"] for f in files.values()) == ["about a.txt", "about b.txt"]
    links = agent["files_agents"]
    assert sorted(link["file_id"] for link in links) == sorted(files)
    for link in links:
        assert (link["agent_id"], link["source_id"], link["is_open"]) == ("agent-0", source["id"], True)
        assert link["file_name"] == files[link["file_id"]]["file_name"] and "last_accessed_at" in link
    assert agent["secrets"] == {"API_KEY": ""} and "super-secret-api-key" not in json.dumps(document)


def test_secrets_sent_with_the_import_fill_the_blanked_values(client: Letta, http: httpx.Client) -> None:
    document = export(http, _agent_with_a_folder(client))
    for field in ("secrets", "env_vars_json"):  # env_vars_json: the deprecated name Letta still reads
        (copy_id,) = import_bytes(client, json.dumps(document).encode(), **{field: '{"API_KEY": "new-key"}'})
        copy = client.agents.retrieve(copy_id, include=["agent.secrets"])
        assert {s.key: s.value for s in copy.secrets} == {"API_KEY": "new-key"}


def _minimal() -> dict[str, Any]:
    return {
        "agents": [{"id": "agent-0", "name": "test"}],
        **{key: [] for key in ("groups", "blocks", "files", "sources", "tools", "mcp_servers")},
        "metadata": {"revision_id": "495f3f474131"},
    }


def test_the_smallest_file_imports_with_only_its_system_message(client: Letta) -> None:
    (agent_id,) = import_bytes(client, json.dumps(_minimal()).encode(), model=MODEL, embedding=EMBEDDING)
    agent = client.agents.retrieve(agent_id)
    assert agent.name == "test_copy" and len(agent.message_ids or []) == 1
    (only,) = client.agents.messages.list(agent_id).items
    assert only.message_type == "system_message" and only.id == agent.message_ids[0]


def test_an_id_used_twice_is_a_400_and_imports_nothing(client: Letta, http: httpx.Client) -> None:
    document = _minimal()
    document["agents"].append({"id": "agent-0", "name": "again"})
    before = http.get("/v1/agents/count").json()
    response = http.post("/v1/agents/import", files={"file": ("a.af", json.dumps(document), "application/json")})
    assert response.status_code == 400 and "agent-0" in response.json()["detail"]
    assert http.get("/v1/agents/count").json() == before


_WEATHER = '''def get_weather(city: str) -> str:
    """Tell the weather.

    Args:
        city: where

    Returns:
        str: the weather
    """
    return "sunny in " + city
'''


def _by(entries: list[dict[str, Any]], fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return sorted((tuple(e[f] for f in fields) for e in entries), key=lambda row: str(row[0]))


def test_export_import_export_keeps_what_letta_compares(client: Letta, http: httpx.Client) -> None:
    """Letta's round-trip check (`compare_agent_files`), field by field; the tool's metadata keeps the file's
    `tool_hash` (Letta stores a file tool's metadata as it is)."""
    tool = client.tools.create(source_code=_WEATHER, tags=["weather", "x"], description="Weather tool")
    block = client.blocks.create(
        label="shared", value="tb", description="bd", metadata={"bm": 2}, template_name="tname", limit=777
    )
    agent = client.agents.create(
        name="rich",
        model=MODEL,
        embedding=EMBEDDING,
        system="Custom system",
        description="desc",
        metadata={"am": [1, 2]},
        tags=["t2", "t1"],
        tool_ids=[tool.id],
        block_ids=[block.id],
        memory_blocks=[{"label": "human", "value": "H"}],
        secrets={"K": "v"},
        tool_rules=[{"tool_name": "get_weather", "type": "continue_loop"}],
        initial_message_sequence=[{"role": "user", "content": "hello"}],
    )
    first = export(http, agent.id)
    (copy_id,) = import_bytes(client, json.dumps(first).encode(), append_copy_suffix=False)
    second = export(http, copy_id)
    agent_fields = ("name", "system", "description", "agent_type", "metadata", "llm_config", "embedding_config")
    for field in (*agent_fields, "tool_rules", "secrets"):
        assert second["agents"][0][field] == first["agents"][0][field], field
    assert sorted(second["agents"][0]["tags"]) == sorted(first["agents"][0]["tags"])
    for key in ("messages", "in_context_message_ids", "tool_ids", "block_ids"):
        assert len(second["agents"][0][key]) == len(first["agents"][0][key]), key
    tool_fields = ("name", "description", "source_code", "json_schema", "tags", "metadata_")
    assert _by(second["tools"], tool_fields) == _by(first["tools"], tool_fields)
    block_fields = ("label", "value", "limit", "description", "metadata", "template_name", "is_template")
    assert _by(second["blocks"], block_fields) == _by(first["blocks"], block_fields)
    weather = next(t for t in client.tools.list(name="get_weather"))
    assert weather.metadata == tool.metadata and weather.id == tool.id


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - {"knowledge-base.af"}))  # its run_first rule picks the tool
def test_each_shared_file_takes_a_turn_on_its_history(client: Letta, mock_llm: MockLLM, name: str) -> None:
    (agent_id,) = import_bytes(client, raw(name), model=MODEL, embedding=EMBEDDING)
    agent = client.agents.retrieve(agent_id, include=["agent.blocks", "agent.tools"])
    history = client.agents.messages.list(agent_id, limit=200, order="asc").items
    stored = next(m for m in history if m.id == (agent.message_ids or [])[0])  # the system message in context
    mock_llm.script(Reply.tool_call("send_message", {"message": "Imported and answering."}))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hello again"}])
    assert [m.content for m in response.messages if m.message_type == "assistant_message"] == [
        "Imported and answering."
    ]
    sent = mock_llm.requests[-1]
    prompt = sent["messages"]
    # The file's stored system message as it is (Letta's turns do not recompile it; this file's own stored prompt
    # shows an older `human` value than its block has).
    assert prompt[0]["role"] == "system" and prompt[0]["content"] == stored.content
    assert len(prompt) == len(agent.message_ids or []) + 1  # the in-context history, then the new message
    assert prompt[-1]["role"] == "user" and "hello again" in json.dumps(prompt[-1])
    assert {t["function"]["name"] for t in sent["tools"]} <= {t.name for t in agent.tools}
    newest = client.agents.messages.list(agent_id, limit=4, order="desc").items
    kinds = [m.message_type for m in newest]
    assert kinds[0] == "assistant_message" and "user_message" in kinds
