"""Agent files of Letta's agent-file gallery (letta-ai/agent-file), imported with letta-client as its users do:
the fragments that matter are built inline from the gallery's shapes (the files themselves are large)."""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.agent_files_support import EMBEDDING, MODEL, export, import_bytes
from tests.api.prompt_sent import openai_system_sent
from tests.mock_llm import MockLLM, Reply

_STORED_PROMPT = "\n\n<memory_metadata>\n- The current system date is: November 21, 2025\n</memory_metadata>"


def _document(agent: dict[str, Any], **extra: Any) -> bytes:
    document = {
        "agents": [{"id": "agent-0", "agent_type": "letta_v1_agent", **agent}],
        **{key: [] for key in ("groups", "blocks", "files", "sources", "tools", "mcp_servers")},
        "metadata": {"revision_id": "b1c2d3e4f5a6"},
        **extra,
    }
    return json.dumps(document).encode()


def _outreach_workflow() -> bytes:
    """The shape of workflow_agent/outreach_workflow_agent.af: an empty `system` and one stored system message."""
    message = {
        "type": "message",
        "id": "message-0",
        "agent_id": "agent-0",
        "role": "system",
        "content": [{"type": "text", "text": _STORED_PROMPT}],
        "created_at": "2025-11-21T03:09:21.194471+00:00",
    }
    agent = {
        "name": "outreach_workflow_agent",
        "system": "",
        "block_ids": ["block-0"],
        "messages": [message],
        "in_context_message_ids": ["message-0"],
    }
    return _document(agent, blocks=[{"id": "block-0", "label": "human", "value": "Name: Bob", "limit": 5000}])


def test_an_empty_system_prompt_stays_empty_as_letta_keeps_it(client: Letta, mock_llm: MockLLM) -> None:
    """Letta derives a default system prompt only when none is given; the file's "" stays, so the model is sent
    the memory alone, before and after a rebuild."""
    (agent_id,) = import_bytes(client, _outreach_workflow(), model=MODEL, embedding=EMBEDDING)
    assert client.agents.retrieve(agent_id).system == ""
    assert openai_system_sent(client, mock_llm, agent_id) == _STORED_PROMPT  # the file's stored message
    client.agents.blocks.update("human", agent_id=agent_id, value="Name: Ann")  # rebuilds the prompt
    rebuilt = openai_system_sent(client, mock_llm, agent_id)
    assert rebuilt.lstrip().startswith("<memory_blocks>") and "Name: Ann" in rebuilt


def test_an_agent_created_with_an_empty_system_prompt_keeps_it(client: Letta) -> None:
    agent = client.agents.create(name="bare", model=MODEL, embedding=EMBEDDING, system="")
    assert agent.system == "" and client.agents.retrieve(agent.id).system == ""
    default = client.agents.create(name="default", model=MODEL, embedding=EMBEDDING)
    assert default.system  # none given: the agent type's default prompt


def test_a_file_without_messages_still_chats(client: Letta, mock_llm: MockLLM) -> None:
    """The shape of @letta-ai/ezra: no messages, a group id with no group in the file, and `skills`. memlet keeps
    the agent's freshly compiled system message (Letta's import deleted it too, leaving the agent nothing to send:
    see the README's compatibility notes), so the first turn works."""
    agent = {"name": "ezra-super", "group_ids": ["group-0"], "messages": [], "in_context_message_ids": []}
    skills = [{"name": "verify-claims", "files": {"SKILL.md": "---\nname: verify-claims\n---\n"}, "source_url": None}]
    (agent_id,) = import_bytes(client, _document(agent, skills=skills), model=MODEL, embedding=EMBEDDING)
    (system,) = client.agents.messages.list(agent_id).items
    assert system.message_type == "system_message"
    mock_llm.script(Reply.text("hello"))
    reply = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    assert [m.message_type for m in reply.messages] == ["assistant_message"]
    assert mock_llm.requests[-1]["messages"][0]["role"] == "system"


# A tool entry of a gallery file (@letta-ai/evie, exported by Letta), its keys in order.
_LETTA_TOOL_KEYS = [
    *("id", "tool_type", "description", "source_type", "name", "tags", "source_code", "json_schema"),
    *("args_json_schema", "return_char_limit", "pip_requirements", "npm_requirements", "default_requires_approval"),
    *("enable_parallel_execution", "created_by_id", "last_updated_by_id", "metadata_", "project_id"),
]


def test_an_exported_tool_has_the_fields_of_letta_exports(client: Letta, http: httpx.Client) -> None:
    source = (
        'def check_order_status(order_number: int) -> str:\n    """Check an order.\n\n    Args:\n'
        '        order_number: the order\n    """\n    return f"Order {order_number} is processing."\n'
    )
    tool = client.tools.create(source_code=source)
    agent = client.agents.create(name="support", model=MODEL, embedding=EMBEDDING, tool_ids=[tool.id])
    entry = next(t for t in export(http, agent.id)["tools"] if t["name"] == "check_order_status")
    assert list(entry) == _LETTA_TOOL_KEYS
    assert (entry["created_by_id"], entry["last_updated_by_id"]) == (tool.created_by_id, tool.last_updated_by_id)
    assert entry["created_by_id"] and entry["project_id"] is None


def test_an_agent_without_secrets_exports_them_as_null(client: Letta, http: httpx.Client) -> None:
    """As in Letta's exports (the gallery's Evie, Loop): `secrets` null and `tool_exec_environment_variables` {};
    an agent with secrets lists their keys, blanked, in both."""
    plain = client.agents.create(name="plain", model=MODEL, embedding=EMBEDDING)
    (agent,) = export(http, plain.id)["agents"]
    assert agent["secrets"] is None and agent["tool_exec_environment_variables"] == {}
    keyed = client.agents.create(name="keyed", model=MODEL, embedding=EMBEDDING, secrets={"BSKY_PASSWORD": "pw"})
    (agent,) = export(http, keyed.id)["agents"]
    assert agent["secrets"] == agent["tool_exec_environment_variables"] == {"BSKY_PASSWORD": ""}


def test_unset_file_limits_are_exported_as_the_agent_shows_them(client: Letta, http: httpx.Client) -> None:
    """The gallery's scripts create agents without file limits; Letta's export (as its GET) has the limits the
    model's context window gives, not null."""
    agent = client.agents.create(name="customer_service", model=MODEL, embedding=EMBEDDING)
    (entry,) = export(http, agent.id)["agents"]
    shown = client.agents.retrieve(agent.id)
    assert entry["max_files_open"] == shown.max_files_open and shown.max_files_open is not None
    assert entry["per_file_view_window_char_limit"] == shown.per_file_view_window_char_limit
    limited = client.agents.create(name="limited", model=MODEL, embedding=EMBEDDING, max_files_open=2)
    assert export(http, limited.id)["agents"][0]["max_files_open"] == 2


def test_the_first_turn_sends_the_files_stored_system_prompt(client: Letta, mock_llm: MockLLM) -> None:
    """As Letta's turns, which do not recompile the prompt: the gallery's Loop or co-3 is first sent the system
    message its file stores (the exporter's date and all), not a recompiled one."""
    stored = "You are Loop. You remember.\n<memory_blocks>\n<human>\nName: Bob\n</human>\n</memory_blocks>"
    message = {"type": "message", "id": "message-0", "agent_id": "agent-0", "role": "system"}
    message |= {"content": [{"type": "text", "text": stored}], "created_at": "2026-01-22T02:06:34.048456+00:00"}
    agent = {"name": "Loop", "system": "You are Loop. You remember.", "block_ids": ["block-0"]}
    agent |= {"messages": [message], "in_context_message_ids": ["message-0"]}
    block = {"id": "block-0", "label": "human", "value": "Name: Bob", "limit": 5000}
    (agent_id,) = import_bytes(client, _document(agent, blocks=[block]), model=MODEL, embedding=EMBEDDING)
    assert openai_system_sent(client, mock_llm, agent_id) == stored


_STORED_VOID = 'You are Void.\n<directories>\n<directory name="folder-1">\n</directory>\n</directories>'


def _void(*, messages: bool) -> bytes:
    """The shape of @cpfiffer/void: a folder with a file open, and its stored system message (or none)."""
    message = {"type": "message", "id": "message-0", "agent_id": "agent-0", "role": "system"}
    message |= {"content": [{"type": "text", "text": _STORED_VOID}], "created_at": "2026-01-22T00:46:27+00:00"}
    link = {"agent_id": "agent-0", "file_id": "file-0", "source_id": "source-0", "is_open": True}
    link |= {"file_name": "folder-1/transcript.md", "visible_content": "hello"}
    agent = {"name": "void", "system": "You are Void.", "source_ids": ["source-0"], "files_agents": [link]}
    agent |= {"messages": [message] if messages else [], "in_context_message_ids": ["message-0"] if messages else []}
    source = {"id": "source-0", "name": "folder-1"}
    file = {"id": "file-0", "source_id": "source-0", "file_name": "folder-1/transcript.md", "content": "hello"}
    file |= {"original_file_name": "transcript.md", "file_type": "text/markdown"}
    return _document(agent, sources=[source], files=[file])


def test_an_agent_with_files_is_first_sent_its_stored_prompt(client: Letta, mock_llm: MockLLM) -> None:
    """Letta's import attaches the files without recompiling the prompt, so the first turn sends the file's
    stored system message."""
    (agent_id,) = import_bytes(client, _void(messages=True), model=MODEL, embedding=EMBEDDING)
    assert [f.file_name for f in client.agents.files.list(agent_id).files] == ["folder-1/transcript.md"]
    assert openai_system_sent(client, mock_llm, agent_id) == _STORED_VOID


def test_an_agent_with_files_and_no_messages_is_sent_its_files(client: Letta, mock_llm: MockLLM) -> None:
    """No stored prompt to keep: the one memlet compiles for the agent shows the folders' files."""
    (agent_id,) = import_bytes(client, _void(messages=False), model=MODEL, embedding=EMBEDDING)
    sent = openai_system_sent(client, mock_llm, agent_id)
    assert sent.startswith("You are Void.") and "transcript.md" in sent
