"""Agent files through the official letta-client against the live server: every shared `.af` imports (legacy
and v2) with its counts, built-ins survive a file's copy, export carries the whole history with secrets blanked,
round trips, options (`strip_messages`, names, `override_existing_tools`)."""

import json
import re
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from letta_client import Letta, NotFoundError

from tests.api.agent_files_support import EMBEDDING, EXPECTED, MODEL, export, import_bytes, raw, v2, wait_files
from tests.mock_llm import MockLLM, Reply


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_shared_agent_file_imports_with_its_counts(client: Letta, http: httpx.Client, name: str) -> None:
    blocks, tools, stored, in_context = EXPECTED[name]
    (agent_id,) = import_bytes(client, raw(name), model=MODEL, embedding=EMBEDDING)
    agent = client.agents.retrieve(agent_id, include=["agent.blocks", "agent.tools", "agent.tags"])
    assert agent.name.endswith("_copy")
    assert len(agent.blocks) == blocks and len(agent.tools) == tools
    assert len(agent.message_ids or []) == in_context
    document = export(http, agent_id)
    assert len(document["agents"][0]["messages"]) == stored
    first = client.agents.messages.list(agent_id, limit=1, order="asc")
    assert first.items[0].message_type == "system_message"
    original = json.loads(raw(name))
    if "agents" in original:
        assert sorted(agent.tags) == sorted(original["agents"][0]["tags"] or [])


def test_files_and_folders_are_reembedded_with_the_target_embedding(client: Letta) -> None:
    data = raw("test_agent_with_files_and_sources.af")
    (agent_id,) = import_bytes(client, data, model=MODEL, x_override_embedding_model=EMBEDDING)
    folders = list(client.agents.folders.list(agent_id))
    assert len(folders) == 1 and folders[0].embedding_config.embedding_model == "text-embedding-3-small"
    assert "api.openai.com" not in (
        folders[0].embedding_config.embedding_endpoint or ""
    )  # the target's, not the file's
    files = wait_files(client, folders[0].id)
    assert len(files) == 2 and {f.processing_status for f in files} == {"completed"}
    assert all((f.chunks_embedded or 0) >= 1 for f in files)


def test_builtin_send_message_survives_a_legacy_copy(client: Letta) -> None:
    before = next(t for t in client.tools.list(name="send_message"))
    import_bytes(client, raw("knowledge-base.af"), model=MODEL)
    after = client.tools.retrieve(before.id)
    assert after.source_code is None and after.tool_type == before.tool_type
    assert after.json_schema == before.json_schema and after.return_char_limit == before.return_char_limit
    assert len(list(client.tools.list(name="send_message"))) == 1


def test_custom_tools_are_upserted_and_legacy_schemas_cleaned(client: Letta) -> None:
    (agent_id,) = import_bytes(client, raw("knowledge-base.af"), model=MODEL)
    agent = client.agents.retrieve(agent_id, include=["agent.tools", "agent.secrets"])
    custom = {t.name: t for t in agent.tools if t.tool_type == "custom"}
    assert set(custom) == {"search_and_store_pinecone_records", "craft_queries", "summarize_pinecone_results"}
    for tool in custom.values():
        properties = tool.json_schema["parameters"]["properties"]
        assert "agent_state" not in properties and "request_heartbeat" not in properties
    assert {s.key for s in agent.secrets} == {"PINECONE_INDEX_HOST", "PINECONE_API_KEY", "PINECONE_NAMESPACE"}


def test_secrets_fill_known_keys_and_export_blanks_them(client: Letta, http: httpx.Client) -> None:
    secrets = json.dumps({"PINECONE_API_KEY": "pk-123", "UNKNOWN": "x"})
    (agent_id,) = import_bytes(client, raw("knowledge-base.af"), model=MODEL, secrets=secrets)
    agent = client.agents.retrieve(agent_id, include=["agent.secrets"])
    values = {s.key: s.value for s in agent.secrets}
    assert values["PINECONE_API_KEY"] == "pk-123" and "UNKNOWN" not in values
    document = export(http, agent_id)
    assert set(document["agents"][0]["secrets"].values()) == {""}
    assert "pk-123" not in json.dumps(document)


def test_export_shape_whole_history_and_scrub(client: Letta, http: httpx.Client) -> None:
    (agent_id,) = import_bytes(client, raw("memgpt_agent_with_convo.af"), model=MODEL)
    text = client.agents.export_file(agent_id)
    document = json.loads(text) if isinstance(text, str) else text
    assert set(document) >= {"agents", "blocks", "tools", "files", "sources", "groups", "mcp_servers"}
    agent = document["agents"][0]
    assert agent["id"] == "agent-0" and all(b["id"].startswith("block-") for b in document["blocks"])
    assert len(agent["messages"]) == 91 and len(agent["in_context_message_ids"]) == 11
    original = json.loads(raw("memgpt_agent_with_convo.af"))
    by_id = {m["id"]: m for m in agent["messages"]}
    in_context = [by_id[i]["content"] for i in agent["in_context_message_ids"]]
    assert in_context == [original["messages"][k]["content"] for k in original["in_context_message_indices"]]
    # timestamps and tool-call ids are kept; the file's naive times are read as UTC
    first_call = next(m for m in original["messages"] if m["tool_calls"])
    exported_call = next(m for m in agent["messages"] if m["tool_calls"])
    assert exported_call["tool_calls"][0]["id"] == first_call["tool_calls"][0]["id"]
    assert datetime.fromisoformat(exported_call["created_at"]) == datetime.fromisoformat(
        first_call["created_at"]
    ).replace(tzinfo=UTC)
    assert all(t["source_code"] is None for t in document["tools"] if t["tool_type"].startswith("letta_"))
    scrubbed = export(http, agent_id, scrub_messages="true")
    assert scrubbed["agents"][0]["messages"] == [] and scrubbed["agents"][0]["in_context_message_ids"] == []
    posted = http.post(f"/v1/agents/{agent_id}/export", json={"scrub_messages": True, "skills": []})
    assert posted.status_code == 200 and posted.json()["agents"][0]["messages"] == []


def test_export_errors(client: Letta, http: httpx.Client) -> None:
    (agent_id,) = import_bytes(client, raw("customer_service.af"), model=MODEL)
    response = http.get(f"/v1/agents/{agent_id}/export", params={"use_legacy_format": "true"})
    assert response.status_code == 400 and "Legacy format" in response.json()["detail"]
    with pytest.raises(NotFoundError):
        client.agents.export_file("agent-00000000-0000-4000-8000-000000000000")


_VOLATILE = re.compile(r"^- (AGENT_ID|System prompt last recompiled):.*$|_[0-9a-f]{8}(?=[/\"])", re.MULTILINE)


def _stable(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A message's content without what differs by design between copies: agent ids, the time of the last
    prompt compile, and the suffix a folder gets when its name is taken."""
    return [{**part, "text": _VOLATILE.sub("", part.get("text") or "")} for part in content]


def _summary(document: dict[str, Any]) -> dict[str, Any]:
    agent = document["agents"][0]
    by_id = {m["id"]: m for m in agent["messages"]}
    blocks = {b["id"]: b for b in document["blocks"]}
    tools = {t["id"]: t for t in document["tools"]}
    return {
        "blocks": [(blocks[b]["label"], blocks[b]["value"], blocks[b]["limit"]) for b in agent["block_ids"]],
        "tools": sorted((tools[t]["name"], tools[t]["source_code"] or "") for t in agent["tool_ids"]),
        "in_context": [(by_id[i]["role"], _stable(by_id[i]["content"])) for i in agent["in_context_message_ids"]],
        "messages": [(m["role"], _stable(m["content"]), m["tool_calls"], m["tool_call_id"]) for m in agent["messages"]],
        "rules": agent["tool_rules"],
        "tags": sorted(agent["tags"]),
        "system": agent["system"],
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_export_import_export_round_trips(client: Letta, http: httpx.Client, name: str) -> None:
    (first_id,) = import_bytes(client, raw(name), model=MODEL, embedding=EMBEDDING)
    first = export(http, first_id)
    (second_id,) = import_bytes(client, json.dumps(first).encode(), model=MODEL, embedding=EMBEDDING)
    second = export(http, second_id)
    assert _summary(second) == _summary(first)
    assert second["agents"][0]["name"] == first["agents"][0]["name"] + "_copy"


def test_a_native_agent_round_trips_with_its_turns(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(
        name="native",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "human", "value": "Name: Ada"}, {"label": "persona", "value": "Helpful"}],
        tags=["t1"],
        secrets={"API_TOKEN": "secret-value"},
    )
    mock_llm.script(Reply.text("first answer"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    first = export(http, agent.id)
    assert "secret-value" not in json.dumps(first) and first["agents"][0]["secrets"] == {"API_TOKEN": ""}
    (copy_id,) = import_bytes(client, json.dumps(first).encode(), model=MODEL)
    second = export(http, copy_id)
    assert _summary(second) == _summary(first)
    mock_llm.script(Reply.text("second answer"))
    reply = client.agents.messages.create(copy_id, messages=[{"role": "user", "content": "again"}])
    assert [m.content for m in reply.messages if m.message_type == "assistant_message"] == ["second answer"]


def test_a_letta_file_with_a_block_past_its_limit_imports_it_intact(client: Letta) -> None:
    data = v2()  # Letta never checks a block's limit, on import or elsewhere
    data["blocks"][0]["limit"] = 10
    (agent_id,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
    human = client.agents.blocks.retrieve("human", agent_id=agent_id)
    assert (human.value, human.limit) == (data["blocks"][0]["value"], 10)


def test_an_export_of_a_block_grown_past_its_limit_imports(client: Letta, http: httpx.Client) -> None:
    agent = client.agents.create(
        name="grown", model=MODEL, memory_blocks=[{"label": "human", "value": "Bob", "limit": 5}]
    )
    client.agents.tools.run(  # the memory tools do not enforce the limit (as Letta)
        agent_id=agent.id, tool_name="memory_insert", args={"label": "human", "new_string": "likes tea"}
    )
    (copy_id,) = import_bytes(client, json.dumps(export(http, agent.id)).encode(), model=MODEL)
    copied = client.agents.blocks.retrieve("human", agent_id=copy_id)
    assert (copied.value, copied.limit) == ("Bob\nlikes tea", 5)


def test_every_agent_of_a_file_imports_in_order_sharing_its_blocks(client: Letta) -> None:
    data = v2()
    second = json.loads(json.dumps(data["agents"][0]))
    second["id"], second["name"] = "agent-1", "second"
    renumber = {m["id"]: f"message-{100 + i}" for i, m in enumerate(second["messages"])}
    for message in second["messages"]:
        message["id"], message["agent_id"] = renumber[message["id"]], "agent-1"
    second["in_context_message_ids"] = [renumber[i] for i in second["in_context_message_ids"]]
    data["agents"].append(second)
    first_id, second_id = import_bytes(client, json.dumps(data).encode(), model=MODEL, append_copy_suffix=False)
    first, other = (client.agents.retrieve(i, include=["agent.blocks"]) for i in (first_id, second_id))
    assert (first.name, other.name) == (data["agents"][0]["name"], "second")
    assert {b.id for b in first.blocks} == {b.id for b in other.blocks}  # one file block, one row
    assert len(other.message_ids or []) == 7


def test_a_long_legacy_history_imports_whole(client: Letta, http: httpx.Client) -> None:
    data = json.loads(raw("memgpt_agent_with_convo.af"))
    turns = [m for m in data["messages"] if m["role"] == "user"][:1] * 2500
    data["messages"] = data["messages"] + turns
    (agent_id,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
    assert len(export(http, agent_id)["agents"][0]["messages"]) == 91 + 2500
    assert len(client.agents.retrieve(agent_id).message_ids or []) == 11


def test_strip_messages_keeps_only_the_system_message(client: Letta, http: httpx.Client) -> None:
    (first_id,) = import_bytes(client, raw("memgpt_agent_with_convo.af"), model=MODEL)
    document = export(http, first_id)
    (agent_id,) = import_bytes(client, json.dumps(document).encode(), strip_messages=True, model=MODEL)
    agent = client.agents.retrieve(agent_id)
    assert len(agent.message_ids or []) == 1
    history = client.agents.messages.list(agent_id, limit=100)
    assert [m.message_type for m in history.items] == ["system_message"]


def test_name_options(client: Letta) -> None:
    (renamed,) = import_bytes(client, raw("customer_service.af"), model=MODEL, name="Support Bot")
    assert client.agents.retrieve(renamed).name == "Support Bot"
    (plain,) = import_bytes(client, raw("customer_service.af"), model=MODEL, append_copy_suffix=False)
    assert client.agents.retrieve(plain).name == json.loads(raw("customer_service.af"))["name"]


def test_override_existing_tools_false_keeps_the_existing_tool(client: Letta) -> None:
    source = 'def escalate(reason: str) -> str:\n    """Mine.\n\n    Args:\n        reason: why\n    """\n    return "mine"\n'
    mine = client.tools.create(source_code=source)
    import_bytes(client, raw("customer_service.af"), model=MODEL, override_existing_tools=False)
    assert client.tools.retrieve(mine.id).source_code == source
    import_bytes(client, raw("customer_service.af"), model=MODEL)
    assert client.tools.retrieve(mine.id).source_code != source
