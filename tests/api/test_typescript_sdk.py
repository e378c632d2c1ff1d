"""Letta's TypeScript SDK (`@letta-ai/letta-client` 1.12.1), run by node against the live server.

TypeScript users drive memlet with this SDK, and Letta Code is built on it. Each test runs a short program written
the way the SDK's README shows, then checks what that program saw (the SDK's objects, stream chunks, pages and error
classes) and what the model was sent (the mock's records). They need node; they skip only when node is absent (CI
has it).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from memlet.config import Settings
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.shared_paths import LETTA
from tests.typescript_sdk import NODE, install, run_js

pytestmark = [pytest.mark.skipif(NODE is None, reason="the TypeScript SDK needs node"), pytest.mark.timeout(300)]

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
CREATE_AGENT = f"""
  const agent = await client.agents.create({{
    model: "{MODEL}", embedding: "{EMBEDDING}",
    memory_blocks: [{{ label: "human", value: "Name: Ada" }}, {{ label: "persona", value: "I am a test agent." }}],
  }});
"""


@pytest.fixture(scope="session")
def sdk() -> Path:
    return install()


def ts(sdk: Path, server: LiveServer, body: str, **kwargs: Any) -> Any:
    return run_js(sdk, server.base_url, body, **kwargs)


def user_text(request: dict[str, Any]) -> str:
    """The last user message of a recorded chat request."""
    content = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def test_create_an_agent_and_send(sdk: Path, server: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("Hello, Ada."))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + """
  const response = await client.agents.messages.create(agent.id, { messages: [{ role: "user", content: "hi" }] });
  const again = await client.agents.retrieve(agent.id, { include: ["agent.blocks"] });
  return { agent, response, blocks: again.memory.blocks.map((b) => [b.label, b.value]) };
""",
    )
    agent, response = out["agent"], out["response"]
    assert agent["id"].startswith("agent-") and agent["model"] == MODEL and agent["agent_type"] == "letta_v1_agent"
    assert sorted(out["blocks"]) == [["human", "Name: Ada"], ["persona", "I am a test agent."]]
    assert [(m["message_type"], m["content"]) for m in response["messages"]] == [("assistant_message", "Hello, Ada.")]
    assert response["stop_reason"] == {"message_type": "stop_reason", "stop_reason": "end_turn"}
    assert response["usage"]["step_count"] == 1 and response["usage"]["completion_tokens"] > 0
    (request,) = mock_llm.requests
    assert user_text(request).endswith("hi")
    assert "Name: Ada" in request["messages"][0]["content"]


@pytest.mark.parametrize("route", ["streaming", "deprecated_stream"])
def test_a_token_stream_is_iterated_chunk_by_chunk(
    sdk: Path, server: LiveServer, mock_llm: MockLLM, route: str
) -> None:
    mock_llm.script(Reply.text("Streamed hello to you."))
    call = {
        "streaming": "client.agents.messages.create(agent.id, { messages, streaming: true, stream_tokens: true })",
        "deprecated_stream": "client.agents.messages.stream(agent.id, { messages, stream_tokens: true })",
    }[route]
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + f"""
  const messages = [{{ role: "user", content: "stream please" }}];
  const stream = await {call};
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
""",
    )
    kinds = [chunk["message_type"] for chunk in out]
    assert kinds[-2:] == ["stop_reason", "usage_statistics"] and out[-2]["stop_reason"] == "end_turn"
    pieces = [chunk for chunk in out if chunk["message_type"] == "assistant_message"]
    assert len(pieces) > 1, "tokens arrive as several chunks"
    assert "".join(piece["content"] for piece in pieces) == "Streamed hello to you."
    assert len({piece["id"] for piece in pieces}) == 1  # one message, several deltas
    assert mock_llm.requests[-1]["stream"] is True


def test_a_custom_tool_is_created_attached_and_called(sdk: Path, server: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.tool_call("roll_die", {"sides": 6}), Reply.text("You rolled."))
    source = json.dumps(
        "def roll_die(sides: int) -> str:\n"
        '    """Roll a die.\n\n    Args:\n        sides: how many sides the die has\n    """\n'
        '    return f"rolled a {sides}-sided die"\n'
    )
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + f"""
  const tool = await client.tools.create({{ source_code: {source} }});
  await client.agents.tools.attach(tool.id, {{ agent_id: agent.id }});
  const attached = [];
  for await (const t of client.agents.tools.list(agent.id)) attached.push(t.name);
  const stream = await client.agents.messages.create(agent.id, {{
    messages: [{{ role: "user", content: "roll it" }}], streaming: true }});
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return {{ tool, attached, chunks }};
""",
    )
    assert out["tool"]["name"] == "roll_die" and out["tool"]["json_schema"]["parameters"]["required"] == ["sides"]
    assert "roll_die" in out["attached"]
    by_kind = {chunk["message_type"]: chunk for chunk in out["chunks"]}
    assert by_kind["tool_call_message"]["tool_call"]["name"] == "roll_die"
    assert json.loads(by_kind["tool_call_message"]["tool_call"]["arguments"]) == {"sides": 6}
    returned = by_kind["tool_return_message"]
    assert (returned["status"], returned["tool_return"]) == ("success", "rolled a 6-sided die")
    assert by_kind["assistant_message"]["content"] == "You rolled."
    # The model saw the tool's schema, then the tool's result.
    first, second = mock_llm.requests
    assert "roll_die" in {t["function"]["name"] for t in first["tools"]}
    assert any("rolled a 6-sided die" in str(m["content"]) for m in second["messages"] if m["role"] == "tool")


def test_auto_pagination_walks_every_page(sdk: Path, server: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.script(*(Reply.text(f"answer {n}") for n in range(3)))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + """
  const created = [agent.id];
  for (let n = 0; n < 4; n++) created.push((await client.agents.create({ model: agent.model, name: `extra-${n}` })).id);
  for (let n = 0; n < 3; n++)
    await client.agents.messages.create(agent.id, { messages: [{ role: "user", content: `question ${n}` }] });
  const collect = async (pages) => { const ids = []; for await (const item of pages) ids.push(item.id); return ids; };
  return {
    created,
    agents: await collect(client.agents.list({ limit: 2 })),
    byDefault: await collect(client.agents.messages.list(agent.id, { limit: 2 })),
    oldestFirst: await collect(client.agents.messages.list(agent.id, { limit: 2, order: "asc" })),
    newestFirst: await collect(client.agents.messages.list(agent.id, { limit: 2, order: "desc" })),
    whole: (await client.agents.messages.list(agent.id, { limit: 100, order: "asc" })).items.map((m) => [m.id, m.message_type]),
  };
""",
    )
    assert sorted(out["agents"]) == sorted(out["created"])
    whole_ids = [message_id for message_id, _ in out["whole"]]
    assert [kind for _, kind in out["whole"]].count("user_message") == 3
    assert len(whole_ids) == 7  # the system message, then three user messages and three replies
    assert out["oldestFirst"] == whole_ids
    assert out["newestFirst"] == whole_ids[::-1]
    # Letta's quirk, kept: with no order, a page is the newest rows oldest first and `after` looks forward, so the
    # SDK's walk ends after the first page.
    assert out["byDefault"] == whole_ids[-2:]


def test_errors_arrive_as_the_sdk_error_classes(sdk: Path, server: LiveServer) -> None:
    out = ts(
        sdk,
        server,
        """
  const caught = async (call) => {
    try { await call(); return null; } catch (e) {
      return { cls: e.constructor.name, status: e.status, notFound: e instanceof NotFoundError,
               unprocessable: e instanceof UnprocessableEntityError, api: e instanceof APIError, error: e.error };
    }
  };
  return {
    missing: await caught(() => client.agents.retrieve("agent-00000000-0000-4000-8000-000000000000")),
    invalid: await caught(() => client.blocks.create({ value: "no label" })),
    badLimit: await caught(() => client.agents.list({ limit: -5 })),
  };
""",
    )
    missing, invalid = out["missing"], out["invalid"]
    assert (missing["cls"], missing["status"], missing["notFound"], missing["api"]) == (
        "NotFoundError",
        404,
        True,
        True,
    )
    assert "agent-00000000-0000-4000-8000-000000000000" in json.dumps(missing["error"])
    assert (invalid["cls"], invalid["status"], invalid["unprocessable"]) == ("UnprocessableEntityError", 422, True)
    assert "('body', 'label')" in invalid["error"]["detail"] and "Field required" in invalid["error"]["detail"]
    assert (out["badLimit"]["cls"], out["badLimit"]["status"]) == ("UnprocessableEntityError", 422)


def test_a_failed_llm_call_mid_stream_is_thrown_and_the_agent_recovers(
    sdk: Path, server: LiveServer, mock_llm: MockLLM, settings: Settings
) -> None:
    mock_llm.script(Reply.error(500, times=settings.llm_max_retries + 1), Reply.text("Back again."))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + """
  const chunks = [];
  let thrown = null;
  try {
    const stream = await client.agents.messages.create(agent.id, {
      messages: [{ role: "user", content: "first" }], streaming: true, include_pings: false });
    for await (const chunk of stream) chunks.push(chunk);
  } catch (e) { thrown = { api: e instanceof APIError, error: e.error }; }
  const next = await client.agents.messages.create(agent.id, { messages: [{ role: "user", content: "second" }] });
  return { chunks, thrown, next: next.messages.map((m) => m.content) };
""",
    )
    assert [c["message_type"] for c in out["chunks"]] == ["stop_reason"]
    assert out["chunks"][0]["stop_reason"] == "llm_api_error"
    thrown = out["thrown"]
    assert thrown["api"] is True
    assert (thrown["error"]["message_type"], thrown["error"]["error_type"]) == ("error_message", "llm_error")
    assert thrown["error"]["run_id"].startswith("run-")
    assert out["next"] == ["Back again."]
    last_request_users = [str(m["content"]) for m in mock_llm.requests[-1]["messages"] if m["role"] == "user"]
    assert last_request_users[-1].endswith("second")
    assert not any(text.endswith("first") for text in last_request_users)  # the failed turn stored no input


def test_a_background_stream_is_resumed_after_the_client_breaks_off(
    sdk: Path, server: LiveServer, mock_llm: MockLLM
) -> None:
    words = " ".join(f"word{n}" for n in range(12))
    mock_llm.script(Reply.text(words).paced(0.15))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + """
  const conversation = await client.conversations.create({ agent_id: agent.id });
  const stream = await client.conversations.messages.create(conversation.id, {
    messages: [{ role: "user", content: "a long answer please" }], background: true, stream_tokens: true,
    include_pings: false });
  const before = [];
  for await (const chunk of stream) {
    before.push(chunk);
    if (chunk.message_type === "assistant_message") break;  // the user's connection drops here
  }
  let busy = null;
  try {
    await client.conversations.messages.create(conversation.id, { messages: [{ role: "user", content: "me too" }] });
  } catch (e) { busy = { cls: e.constructor.name, status: e.status, conflict: e instanceof ConflictError }; }
  const last = before[before.length - 1];
  const resumed = await client.conversations.messages.stream(conversation.id, {
    run_id: last.run_id, starting_after: last.seq_id, include_pings: false });
  const after = [];
  for await (const chunk of resumed) after.push(chunk);
  const run = await client.runs.retrieve(last.run_id);
  return { before, after, busy, run: { status: run.status, conversation_id: run.conversation_id },
           conversation: conversation.id };
""",
    )
    before, after = out["before"], out["after"]
    assert out["busy"] == {"cls": "ConflictError", "status": 409, "conflict": True}
    seqs = [c["seq_id"] for c in before + after if c.get("seq_id") is not None]
    assert seqs == sorted(set(seqs)), "every chunk exactly once, in order"
    text = "".join(c["content"] for c in before + after if c["message_type"] == "assistant_message")
    assert text == words
    assert after[-2]["message_type"] == "stop_reason" and after[-2]["stop_reason"] == "end_turn"
    assert out["run"] == {"status": "completed", "conversation_id": out["conversation"]}
    assert len(mock_llm.requests) == 1, "the dropped connection did not start a second turn"


def test_memory_blocks_and_archival_passages(sdk: Path, server: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("Noted."))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + """
  await client.agents.blocks.update("human", { agent_id: agent.id, value: "Name: Ada Lovelace" });
  const human = await client.agents.blocks.retrieve("human", { agent_id: agent.id });
  const stored = await client.agents.passages.create(agent.id, { text: "The analytical engine weaves patterns." });
  await client.agents.passages.create(agent.id, { text: "Tea is served at four." });
  const found = await client.agents.passages.search(agent.id, { query: "analytical engine", top_k: 1 });
  await client.agents.messages.create(agent.id, { messages: [{ role: "user", content: "who am I?" }] });
  return { human: human.value, stored: stored.map((p) => p.text), found };
""",
    )
    assert out["human"] == "Name: Ada Lovelace"
    assert out["stored"] == ["The analytical engine weaves patterns."]
    assert [r["content"] for r in out["found"]["results"]] == ["The analytical engine weaves patterns."]
    assert out["found"]["count"] == 1
    system = mock_llm.requests[-1]["messages"][0]["content"]
    assert "Name: Ada Lovelace" in system and "Name: Ada\n" not in system


def test_the_api_key_is_the_server_password(sdk: Path, settings: Settings) -> None:
    secured = LiveServer(settings.model_copy(update={"server_password": SecretStr("ts-s3cret")})).start()
    try:
        body = "return (await client.agents.list()).items.length;"
        assert ts(sdk, secured, body, api_key="ts-s3cret") == 0
        refused = ts(sdk, secured, body)
        assert (refused["thrown"], refused["status"]) == ("AuthenticationError", 401)
        wrong = ts(sdk, secured, body, api_key="guess")
        assert (wrong["thrown"], wrong["status"]) == ("AuthenticationError", 401)
    finally:
        secured.stop()


def test_files_upload_and_agent_files_travel_as_multipart(sdk: Path, server: LiveServer, mock_llm: MockLLM) -> None:
    agent_file = json.dumps(str(LETTA / "agent-files" / "test_agent_with_files_and_sources.af"))
    out = ts(
        sdk,
        server,
        CREATE_AGENT
        + f"""
  const folder = await client.folders.create({{ name: "ts-notes", embedding: "{EMBEDDING}" }});
  const text = "The lighthouse keeper logs every ship that passes the northern reef.";
  const uploaded = await client.folders.files.upload(folder.id, {{
    file: await toFile(Buffer.from(text), "keeper.txt", {{ type: "text/plain" }}) }});
  let file = uploaded;
  for (let tries = 0; tries < 200 && !["completed", "error"].includes(file.processing_status); tries++) {{
    await new Promise((resolve) => setTimeout(resolve, 100));
    file = await client.folders.files.retrieve(uploaded.id, {{ folder_id: folder.id }});
  }}
  await client.agents.folders.attach(folder.id, {{ agent_id: agent.id }});
  const withFiles = await client.agents.retrieve(agent.id, {{ include: ["agent.blocks"] }});
  const imported = await client.agents.importFile({{
    file: await toFile(await readFile({agent_file}), "agent.af"), append_copy_suffix: true,
    embedding: "{EMBEDDING}", model: "{MODEL}" }});
  const exported = await client.agents.exportFile(imported.agent_ids[0]);
  return {{
    uploaded: {{ name: uploaded.file_name, status: uploaded.processing_status }},
    file: {{ status: file.processing_status, chunks: file.total_chunks, error: file.error_message }},
    fileBlocks: withFiles.memory.file_blocks.map((b) => [b.label, b.value]),
    imported: imported.agent_ids,
    exported: typeof exported === "string" ? JSON.parse(exported) : exported,
  }};
""",
    )
    assert out["uploaded"]["name"] == "ts-notes/keeper.txt"  # Letta names a file after its folder
    assert out["file"] == {"status": "completed", "chunks": 1, "error": None}
    ((label, value),) = out["fileBlocks"]  # the agent's memory shows the attached file, open
    assert label == "ts-notes/keeper.txt" and "1: The lighthouse keeper logs every ship" in value
    (agent_id,) = out["imported"]
    (exported_agent,) = out["exported"]["agents"]
    assert exported_agent["id"].startswith("agent-") and exported_agent["name"].endswith("_copy")
    assert sorted(f["file_name"] for f in out["exported"]["files"]) == [
        "test_disk_export_source/test.md",
        "test_disk_export_source/test.txt",
    ]
    assert agent_id.startswith("agent-")
