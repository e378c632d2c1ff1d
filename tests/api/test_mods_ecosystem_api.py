"""Letta Code mods (letta-ai/mods) that call the Letta API themselves, against memlet, call for call.

- oath-keeper (`fetch` with `LETTA_BASE_URL`): classifies a reply in a throwaway conversation
  (`POST /v1/conversations?agent_id=` with `{}`, no slash; `POST .../messages` with `{"input", "role"}`, reading
  the SSE `data:` lines' `assistant_message` `content`; then `DELETE`), polls the agent's history for the newest
  reply (`GET /v1/agents/{id}/messages?conversation_id=&limit=20`, sorted by `date`) and retries a delivery on 409.
- analysis-mode (`curl | jq` in the prompt it gives the agent): the agent's `id`/`name`/`model`, its core-memory
  blocks' `label`/`value`, a conversation's `in_context_message_ids` and its messages (`limit=30&order=asc`).
- muscle-memory (Letta Code's TypeScript client, with `MM_NATIVE=passages,blocks`): `agents.blocks.update(
  "muscle_memory", {agent_id, value})`, which only works on a block that exists; its skill index as tagged
  passages (`passages.create(agentId, {text, tags})`, `passages.search(agentId, {query, tags: ["mm:skill"],
  tag_match_mode: "all", top_k})` reading `results[].id/tags/content`, `passages.delete(id, {agent_id})`).
"""

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.typescript_sdk import install, run_js

AUTH = {"Authorization": "Bearer sk-mods"}
MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def sse_assistant_texts(body: str) -> list[str]:
    """oath-keeper's reading of a streamed send: every `data:` line's assistant `content`."""
    texts = []
    for line in body.split("\n"):
        if not line.startswith("data: "):
            continue
        try:
            chunk = json.loads(line[len("data: ") :])
        except json.JSONDecodeError:
            continue  # `[DONE]`
        if chunk.get("message_type") == "assistant_message" and chunk.get("content"):
            texts.append(str(chunk["content"]))
    return texts


def test_oath_keeper_classifies_in_a_throwaway_conversation(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = http.post("/v1/agents/", json={"model": MODEL}, headers=AUTH).json()["id"]
    created = http.post(
        f"/v1/conversations?agent_id={agent_id}", content="{}", headers={**AUTH, "Content-Type": "application/json"}
    )
    assert created.status_code == 200, created.text
    conversation_id = created.json()["id"]

    mock_llm.script(Reply.text('{"promise": "check the deploy logs", "delay_minutes": 3}'))
    sent = http.post(
        f"/v1/conversations/{conversation_id}/messages",
        json={"input": "Message: I'll check the deploy logs and get back to you.", "role": "user"},
        headers=AUTH,
        timeout=30,
    )
    assert sent.status_code == 200 and sent.headers["content-type"].startswith("text/event-stream")
    (answer,) = sse_assistant_texts(sent.text)
    assert json.loads(answer) == {"promise": "check the deploy logs", "delay_minutes": 3}
    assert "I'll check the deploy logs" in json.dumps(mock_llm.requests[-1]["messages"])

    # Polling: the newest reply of the conversation, by date.
    history = http.get(f"/v1/agents/{agent_id}/messages?conversation_id={conversation_id}&limit=20", headers=AUTH)
    assert history.status_code == 200
    replies = [m for m in history.json() if m["message_type"] == "assistant_message"]
    assert [m["content"] for m in replies] == [answer] and replies[0]["date"].endswith("+00:00")

    deleted = http.delete(f"/v1/conversations/{conversation_id}", headers=AUTH)
    assert deleted.status_code == 200 and deleted.json() is None
    assert http.get(f"/v1/conversations/{conversation_id}", headers=AUTH).status_code == 404


def test_analysis_mode_reads_what_its_jq_filters_name(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = http.post(
        "/v1/agents/",
        json={"name": "analyst", "model": MODEL, "memory_blocks": [{"label": "human", "value": "Name: Ada"}]},
        headers=AUTH,
    ).json()
    shown = http.get(f"/v1/agents/{agent['id']}", headers=AUTH).json()
    assert (shown["id"], shown["name"], shown["model"]) == (agent["id"], "analyst", MODEL)
    assert "system_prompt" not in shown  # jq reads `null` and counts 0 characters, as on Letta
    blocks = http.get(f"/v1/agents/{agent['id']}/core-memory/blocks", headers=AUTH).json()
    assert [(b["label"], b["value"]) for b in blocks] == [("human", "Name: Ada")]

    conversation_id = http.post(f"/v1/conversations/?agent_id={agent['id']}", headers=AUTH).json()["id"]
    mock_llm.script(Reply.text("Hello Ada."))
    payload = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi there"}]}]}
    assert http.post(f"/v1/conversations/{conversation_id}/messages", json=payload, headers=AUTH).status_code == 200
    conversation = http.get(f"/v1/conversations/{conversation_id}", headers=AUTH).json()
    assert len(conversation["in_context_message_ids"]) == 3  # system, user, reply
    listed = http.get(f"/v1/conversations/{conversation_id}/messages?limit=30&order=asc", headers=AUTH).json()
    assert [m["message_type"] for m in listed] == ["system_message", "user_message", "assistant_message"]
    assert listed[1]["content"] == "Hi there"


@pytest.fixture(scope="module")
def sdk() -> Path:
    if shutil.which("node") is None:
        pytest.skip("the TypeScript SDK needs node")
    return install()


def muscle_memory(sdk: Path, server: LiveServer, body: str) -> Any:
    return run_js(sdk, server.base_url, body, api_key="sk-mods")


def test_muscle_memory_syncs_its_skill_index_as_tagged_passages(sdk: Path, server: LiveServer) -> None:
    out = muscle_memory(
        sdk,
        server,
        f"""
  const agent = await client.agents.create({{ model: "{MODEL}", embedding: "{EMBEDDING}" }});
  const skill = (name, text) => ({{ text: `skill: ${{name}}\\n${{text}}`, tags: ["mm:skill", `mm:skill:${{name}}`] }});
  await client.agents.passages.create(agent.id, skill("pinning-flaky-builds", "Pin dependencies of flaky builds"));
  await client.agents.passages.create(agent.id, skill("rebase-safely", "Rebase with force-with-lease"));
  await client.agents.passages.create(agent.id, {{ text: "skill: not-indexed\\nan ordinary memory" }});
  const index = async () => (await client.agents.passages.search(agent.id,
    {{ query: "mm:skill", tags: ["mm:skill"], tag_match_mode: "all", top_k: 500 }})).results;
  const before = await index();
  // Reconciliation: a skill no longer on the shelf is deleted by id.
  const stale = before.find((r) => r.tags.includes("mm:skill:rebase-safely"));
  const removed = await client.agents.passages.delete(stale.id, {{ agent_id: agent.id }});
  const after = await index();
  const routed = await client.agents.passages.search(agent.id,
    {{ query: "my CI build is flaky", tags: ["mm:skill"], tag_match_mode: "all", top_k: 5 }});
  let missing = null;
  try {{
    await client.agents.blocks.update("muscle_memory", {{ agent_id: agent.id, value: "skills: pinning-flaky-builds" }});
  }} catch (e) {{
    missing = [e.constructor.name, e.status, e.error];
  }}
  await client.blocks.create({{ label: "muscle_memory", value: "" }}).then((b) =>
    client.agents.blocks.attach(b.id, {{ agent_id: agent.id }}));
  const synced = await client.agents.blocks.update("muscle_memory",
    {{ agent_id: agent.id, value: "skills: pinning-flaky-builds" }});
  return {{ agent: agent.id, before, stale: stale.id, removed, after, routed, missing, synced: synced.value }};
""",
    )
    assert sorted(r["content"].split("\n")[0] for r in out["before"]) == [
        "skill: pinning-flaky-builds",
        "skill: rebase-safely",
    ]
    assert all({"id", "timestamp", "content", "tags"} <= r.keys() for r in out["before"])
    assert out["removed"] == {"message": f"Memory id={out['stale']} successfully deleted"}
    assert [r["tags"] for r in out["after"]] == [["mm:skill", "mm:skill:pinning-flaky-builds"]]
    assert out["routed"]["count"] == 1 and out["routed"]["results"][0]["content"].startswith("skill: pinning")
    detail = f"No block with label 'muscle_memory' found for agent '{out['agent']}'"
    assert out["missing"] == ["NotFoundError", 404, {"detail": detail}]
    assert out["synced"] == "skills: pinning-flaky-builds"


def test_muscle_memory_on_a_letta_code_agent_without_embeddings(sdk: Path, server: LiveServer) -> None:
    """Letta Code creates its agents without an embedding, so a search is a case-insensitive substring match on
    the passage text, as on Letta: the mod's index query `mm:skill` (a tag, not text) finds nothing there."""
    out = muscle_memory(
        sdk,
        server,
        f"""
  const agent = await client.agents.create({{ model: "{MODEL}" }});
  await client.agents.passages.create(agent.id,
    {{ text: "skill: pinning-flaky-builds\\nPin dependencies", tags: ["mm:skill", "mm:skill:pinning-flaky-builds"] }});
  const search = async (query) => (await client.agents.passages.search(agent.id,
    {{ query, tags: ["mm:skill"], tag_match_mode: "all", top_k: 500 }})).results.map((r) => r.content);
  return {{ embedding: agent.embedding_config, byTag: await search("mm:skill"), byText: await search("SKILL: Pinning") }};
""",
    )
    assert out == {"embedding": None, "byTag": [], "byText": ["skill: pinning-flaky-builds\nPin dependencies"]}
