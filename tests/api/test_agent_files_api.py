"""Agent files through the official letta-client against the live server: every shared `.af` imports (legacy
and v2), built-ins survive a file's copy, export carries the whole history with secrets blanked, round trips,
`strip_messages`, and malformed or oversized files give 4xx and leave no rows."""

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from letta_client import BadRequestError, Letta, NotFoundError

from tests.mock_llm import MockLLM, Reply
from tests.shared_paths import SHARED

AF_DIR = SHARED / "letta" / "agent-files"
MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

# file: (blocks, tools, stored messages, in-context messages)
EXPECTED = {
    "customer_service.af": (2, 10, 4, 4),
    "deep_research_agent.af": (3, 5, 4, 4),
    "knowledge-base.af": (2, 4, 13, 13),
    "memgpt_agent_with_convo.af": (2, 6, 91, 11),
    "test_agent_with_files_and_sources.af": (2, 7, 7, 7),
    "test_basic_agent_with_blocks_tools_messages_v2.af": (3, 7, 7, 7),
}


def raw(name: str) -> bytes:
    return (AF_DIR / name).read_bytes()


def import_bytes(client: Letta, data: bytes, **options: Any) -> list[str]:
    """Import, then wait for the imported files' background embedding (the test's cleanup must not race it)."""
    response = client.agents.import_file(file=("agent.af", data, "application/json"), **options)
    for agent_id in response.agent_ids:
        for folder in client.agents.folders.list(agent_id):
            wait_files(client, folder.id)
    return list(response.agent_ids)


def export(http: httpx.Client, agent_id: str, **params: Any) -> dict[str, Any]:
    response = http.get(f"/v1/agents/{agent_id}/export", params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def counts(http: httpx.Client) -> dict[str, int]:
    """Rows an import could leave behind, by table (base tools are always there and never change)."""
    result = {}
    for path in ("/v1/agents/count", "/v1/blocks/count", "/v1/folders/count"):
        result[path] = http.get(path).json()
    result["tools"] = http.get("/v1/tools/count").json()
    return result


def wait_files(client: Letta, folder_id: str, timeout: float = 20) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        files = list(client.folders.files.list(folder_id))
        if all(f.processing_status in ("completed", "error") for f in files) or time.monotonic() > deadline:
            return files
        time.sleep(0.1)


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


def test_every_agent_of_a_file_imports_in_order_sharing_its_blocks(client: Letta) -> None:
    data = _v2()
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


def _v2() -> dict[str, Any]:
    return json.loads(raw("test_basic_agent_with_blocks_tools_messages_v2.af"))  # type: ignore[no-any-return]


def _without_groups() -> dict[str, Any]:
    data = _v2()
    del data["groups"]
    return data


def _unknown_block_key() -> dict[str, Any]:
    data = _v2()
    data["blocks"][0]["colour"] = "red"
    return data


def _wrong_type() -> dict[str, Any]:
    data = _v2()
    data["agents"][0]["messages"] = "none"
    return data


def _unknown_rule() -> dict[str, Any]:
    data = _v2()
    data["agents"][0]["tool_rules"] = [{"tool_name": "send_message", "type": "teleport"}]
    return data


def _dangling_block() -> dict[str, Any]:
    data = _v2()
    data["agents"][0]["block_ids"].append("block-99")
    return data


def _bad_tool_late() -> dict[str, Any]:
    """Passes validation, then fails while importing (after tools and blocks were written): nothing may stay."""
    data = _v2()
    data["blocks"][0]["value"] = "x" * 50
    data["blocks"][0]["limit"] = 10
    return data


MALFORMED = {
    "groups": (_without_groups, "groups"),
    "colour": (_unknown_block_key, "blocks.0.colour"),
    "messages": (_wrong_type, "agents.0.messages"),
    "teleport": (_unknown_rule, "tool_rules"),
    "block-99": (_dangling_block, "block-99"),
    "limit": (_bad_tool_late, "limit"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_give_400_naming_the_field_and_leave_no_rows(
    client: Letta, http: httpx.Client, case: str
) -> None:
    build, field = MALFORMED[case]
    before = counts(http)
    with pytest.raises(BadRequestError) as caught:
        import_bytes(client, json.dumps(build()).encode(), model=MODEL)
    assert field in str(caught.value.body)
    assert counts(http) == before


def test_not_json_and_legacy_without_core_keys(http: httpx.Client) -> None:
    response = http.post("/v1/agents/import", files={"file": ("a.af", b"{not json", "application/json")})
    assert response.status_code == 400 and "Corrupted" in response.json()["detail"]
    legacy = json.loads(raw("customer_service.af"))
    legacy["messages"][0]["role"] = 7
    response = http.post("/v1/agents/import", files={"file": ("a.af", json.dumps(legacy).encode(), "text/plain")})
    assert response.status_code == 400 and "messages.0.role" in response.json()["detail"]


def test_oversized_files_give_413_without_rows(http: httpx.Client) -> None:
    before = counts(http)
    padding = b" " * (25 * 1024 * 1024)  # over the 24 MiB agent-file limit, under the server's body limit
    response = http.post("/v1/agents/import", files={"file": ("big.af", b"{" + padding + b"}", "application/json")})
    assert response.status_code == 413

    def chunks() -> Any:
        for _ in range(50):
            yield b" " * (1024 * 1024)

    boundary = "afboundary"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.af"\r\n\r\n'.encode()

    def body() -> Any:
        yield head
        yield from chunks()
        yield f"\r\n--{boundary}--\r\n".encode()

    response = http.post(
        "/v1/agents/import", content=body(), headers={"content-type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 413
    assert counts(http) == before


def test_an_imported_agent_takes_a_turn(client: Letta, mock_llm: MockLLM) -> None:
    (agent_id,) = import_bytes(client, raw("customer_service.af"), model=MODEL)
    mock_llm.script(Reply.tool_call("send_message", {"message": "Back from the file!"}))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hello"}])
    texts = [m.content for m in response.messages if m.message_type == "assistant_message"]
    assert texts == ["Back from the file!"]
    sent = json.dumps(mock_llm.requests[-1]["messages"])
    assert "2025-03-31 08:47:19 PM PDT-0700" in sent  # the imported history reached the model
    assert "Adaptive Neural Network Assistant" in sent  # and so did the imported memory


def test_mcp_tools_without_a_server_import_and_fail_clearly(client: Letta, mock_llm: MockLLM) -> None:
    data = _v2()
    data["tools"].append(
        {
            "id": "tool-90",
            "name": "web_search_exa",
            "tool_type": "external_mcp",
            "description": "Search the web",
            "tags": ["mcp:Exa"],
            "source_type": "python",
            "source_code": "def web_search_exa(query: str):\n    raise RuntimeError('MCP stub')\n",
            "json_schema": {
                "name": "web_search_exa",
                "description": "Search",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
            "metadata_": {"mcp": {"server_name": "Exa"}},
        }
    )
    data["agents"][0]["tool_ids"].append("tool-90")
    (agent_id,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
    agent = client.agents.retrieve(agent_id, include=["agent.tools"])
    tool = next(t for t in agent.tools if t.name == "web_search_exa")
    assert tool.tool_type == "external_mcp" and tool.tags == ["mcp:Exa"]
    mock_llm.script(
        Reply.tool_call("web_search_exa", {"query": "x"}), Reply.tool_call("send_message", {"message": "ok"})
    )
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "search"}])
    returns = [m for m in response.messages if m.message_type == "tool_return_message"]
    assert returns[0].status == "error" and "MCP server 'Exa'" in returns[0].tool_return


def test_unknown_import_path_shapes(http: httpx.Client) -> None:
    response = http.post("/v1/agents/import", data={"strip_messages": "maybe"}, files={"file": ("a", b"{}")})
    assert response.status_code == 400
    response = http.post("/v1/agents/import", files={"file": ("a", b"{}")}, data={"secrets": "[1]"})
    assert response.status_code == 400 and "secrets" in response.json()["detail"]
    body = '--b\r\nContent-Disposition: form-data; name="file"; filename="\U000f28af"\r\n\r\n{}\r\n--b--\r\n'
    response = http.post(
        "/v1/agents/import", content=body.encode(), headers={"content-type": "multipart/form-data; boundary=b"}
    )
    assert response.status_code == 400  # a header the multipart parser cannot read is the client's error


def test_shared_dir_holds_the_six_files() -> None:
    assert sorted(p.name for p in Path(AF_DIR).glob("*.af")) == sorted(EXPECTED)
