"""claude-subconscious 2.1.1 (letta-ai/claude-subconscious), the Claude Code plugin whose hook scripts drive a Letta
server with raw `fetch`: the requests its hooks make, in their shapes and order, sent with httpx to the live server.

- SessionStart (`session_start.ts`, `agent_config.ts`): import the bundled `Subconscious.af` as multipart, rename it,
  add the `git-memory-enabled` tag, compare `llm_config.handle` with `GET /v1/models/` and PATCH `model` plus
  `context_window_limit`, read the agent with `include=agent.blocks`, create a conversation with
  `POST /v1/conversations/?agent_id=` and no body, then send the session-start message and hang up after the
  first chunk of its stream.
- UserPromptSubmit / PreToolUse (`sync_letta_memory.ts`, `pretool_sync.ts`): list the conversation's messages
  (`limit=300` / `limit=20`, newest first), keep the `assistant_message`s and show their `content` and `date`,
  and diff the block values against the last read.

The Stop hook hands transcripts to a worker running Letta Code, which tests/api/test_letta_code.py covers.
"""

import json
import time
from typing import Any

import httpx

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

AUTH = {"Authorization": "Bearer sk-any"}  # the hooks always send one; memlet without a password ignores it
MODEL = "openai/gpt-4o-mini"
GUIDANCE = "(No active guidance yet.)"
DIRECTIVES = "ROLE: watch coding sessions and whisper back."


def agent_file() -> dict[str, Any]:
    """A small stand-in for the plugin's `Subconscious.af`: a letta_v1 agent on a model this server does not
    serve (the real file has `zai/glm-5`), its own blocks, and a built-in memory tool carrying an old schema."""
    stale_replace = {
        "name": "memory_replace",
        "description": "Replace a string in a memory block.",
        "parameters": {
            "type": "object",
            "properties": {"label": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
            "required": ["label", "old_str", "new_str"],
        },
    }
    return {
        "agents": [
            {
                "id": "agent-0",
                "name": "Subconscious",
                "agent_type": "letta_v1_agent",
                "system": "You are the Subconscious, a background agent that watches coding sessions.",
                "description": "Watches Claude Code sessions and whispers guidance back.",
                "tags": ["origin:claude-subconcious"],
                "llm_config": {
                    "model": "glm-5",
                    "model_endpoint_type": "zai",
                    "model_endpoint": "https://api.z.ai/api/paas/v4/",
                    "provider_name": "zai",
                    "context_window": 90000,
                    "handle": "zai/glm-5",
                    "temperature": 0.7,
                },
                "embedding_config": {
                    "embedding_endpoint_type": "openai",
                    "embedding_model": "text-embedding-3-small",
                    "embedding_dim": 1536,
                    "handle": "openai/text-embedding-3-small",
                },
                "tool_ids": ["tool-0"],
                "block_ids": ["block-0", "block-1"],
                "timezone": "UTC",
            }
        ],
        "groups": [],
        "blocks": [
            {"id": "block-0", "label": "core_directives", "value": DIRECTIVES, "limit": 5000, "description": "Role."},
            {"id": "block-1", "label": "guidance", "value": GUIDANCE, "limit": 3000, "description": "For next time."},
        ],
        "files": [],
        "sources": [],
        "tools": [
            {
                "id": "tool-0",
                "name": "memory_replace",
                "tool_type": "letta_sleeptime_core",
                "source_type": "python",
                "json_schema": stale_replace,
            }
        ],
        "mcp_servers": [],
    }


def import_and_tag(http: httpx.Client) -> str:
    """`importDefaultAgent` then `ensureRequiredAgentTags`, request for request."""
    files = {"file": ("Subconscious.af", json.dumps(agent_file()).encode(), "application/json")}
    imported = http.post("/v1/agents/import", files=files, headers=AUTH)
    assert imported.status_code == 200, imported.text
    (agent_id,) = imported.json()["agent_ids"]
    renamed = http.patch(f"/v1/agents/{agent_id}", json={"name": "Subconscious"}, headers=AUTH)
    assert renamed.status_code == 200 and renamed.json()["name"] == "Subconscious"
    tags = http.get(f"/v1/agents/{agent_id}", headers=AUTH).json()["tags"]
    assert tags == ["origin:claude-subconcious"]
    tagged = http.patch(f"/v1/agents/{agent_id}", json={"tags": [*tags, "git-memory-enabled"]}, headers=AUTH)
    assert tagged.status_code == 200
    assert sorted(tagged.json()["tags"]) == ["git-memory-enabled", "origin:claude-subconcious"]
    return str(agent_id)


def retarget(http: httpx.Client, agent_id: str) -> None:
    """`ensureModelAvailable`: the file's model is not served, so the hook PATCHes LETTA_MODEL with the context
    window it read from the agent."""
    models = http.get("/v1/models/", headers=AUTH).json()
    handles = {m["handle"] for m in models}
    assert MODEL in handles and "zai/glm-5" not in handles
    assert all({"handle", "name", "model", "provider_type"} <= m.keys() for m in models)
    llm_config = http.get(f"/v1/agents/{agent_id}", headers=AUTH).json()["llm_config"]
    assert (llm_config["handle"], llm_config["context_window"]) == ("zai/glm-5", 90000)
    body = {"model": MODEL, "context_window_limit": llm_config["context_window"]}
    patched = http.patch(f"/v1/agents/{agent_id}", json=body, headers=AUTH)
    assert patched.status_code == 200, patched.text
    assert (patched.json()["llm_config"]["handle"], patched.json()["llm_config"]["context_window"]) == (MODEL, 90000)


def send_and_hang_up(base_url: str, conversation_id: str, text: str) -> dict[str, Any]:
    """`sendSessionStartMessage`: a default (streamed) send whose first chunk is read before the reader cancels."""
    payload = {"messages": [{"role": "user", "content": text}]}
    with (
        httpx.Client(base_url=base_url, timeout=30, headers=AUTH) as own,
        own.stream("POST", f"/v1/conversations/{conversation_id}/messages", json=payload) as response,
    ):
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                return dict(json.loads(line[len("data: ") :]))
    raise AssertionError("no chunk")


def assistant_messages(http: httpx.Client, conversation_id: str, limit: int, count: int) -> list[dict[str, Any]]:
    """`fetchAssistantMessages`: the list the hooks read, waited on until the turn left behind its replies."""
    deadline = time.monotonic() + 20
    while True:
        listed = http.get(f"/v1/conversations/{conversation_id}/messages", params={"limit": limit}, headers=AUTH)
        assert listed.status_code == 200, listed.text
        replies = [m for m in listed.json() if m["message_type"] == "assistant_message"]
        if len(replies) >= count or time.monotonic() > deadline:
            return replies
        time.sleep(0.1)


def blocks(http: httpx.Client, agent_id: str) -> dict[str, str]:
    agent = http.get(f"/v1/agents/{agent_id}", params={"include": "agent.blocks"}, headers=AUTH).json()
    return {b["label"]: b["value"] for b in agent["blocks"]}


def test_a_session_imports_the_agent_whispers_and_its_memory_edits_show_up(
    server: LiveServer, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = import_and_tag(http)
    retarget(http, agent_id)
    assert blocks(http, agent_id) == {"core_directives": DIRECTIVES, "guidance": GUIDANCE}
    created = http.post(f"/v1/conversations/?agent_id={agent_id}", headers={**AUTH, "Content-Type": "application/json"})
    assert created.status_code == 200, created.text
    conversation_id = created.json()["id"]
    assert created.json()["agent_id"] == agent_id and conversation_id.startswith("conv-")

    edit = {"label": "guidance", "old_string": GUIDANCE, "new_string": "Finish the README started last time."}
    mock_llm.script(
        Reply.delay(0.5, then=Reply.tool_call("memory_replace", edit)), Reply.text("I see a README in progress.")
    )
    first = send_and_hang_up(server.base_url, conversation_id, "<claude_code_session_start/>")
    assert first["message_type"] == "ping"
    # The hook has gone; the turn goes on and leaves its reply and its memory edit for the next prompt's sync.
    (reply,) = assistant_messages(http, conversation_id, limit=300, count=1)
    assert reply["content"] == "I see a README in progress." and reply["date"].endswith("+00:00")
    assert reply["id"].startswith("message-")
    assert blocks(http, agent_id)["guidance"] == "Finish the README started last time."
    # The model got the built-in schema, not the file's old copy of it, as Letta regenerates built-ins' schemas.
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in mock_llm.requests[0]["tools"]}
    assert set(offered["memory_replace"]["properties"]) == {"label", "old_string", "new_string"}

    mock_llm.script(Reply.text("Second whisper."))
    send_and_hang_up(server.base_url, conversation_id, "<claude_code_session_update/>")
    newest = assistant_messages(http, conversation_id, limit=20, count=2)
    assert [m["content"] for m in newest] == ["Second whisper.", "I see a README in progress."]  # newest first


def test_the_git_memory_tag_leaves_the_blocks_in_the_prompt(
    server: LiveServer, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """memlet's side of a README compatibility note: the tag the plugin adds changes nothing in the prompt (Letta
    0.16.8 rendered only `system/` blocks for a tagged agent, so the Subconscious lost its blocks' values)."""
    agent_id = import_and_tag(http)
    retarget(http, agent_id)
    agent = http.get(f"/v1/agents/{agent_id}", headers=AUTH).json()
    assert agent["memory"]["git_enabled"] is False
    conversation_id = http.post(f"/v1/conversations/?agent_id={agent_id}", headers=AUTH).json()["id"]
    send_and_hang_up(server.base_url, conversation_id, "<claude_code_session_start/>")
    assert len(assistant_messages(http, conversation_id, limit=300, count=1)) == 1
    system = mock_llm.requests[0]["messages"][0]["content"]
    assert "<memory_blocks>" in system and "<external_projection>" not in system
    for label, value in (("core_directives", DIRECTIVES), ("guidance", GUIDANCE)):
        assert f"<{label}>" in system and value in system
