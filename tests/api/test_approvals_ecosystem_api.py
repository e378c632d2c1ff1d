"""What lettabot (letta-ai/lettabot, a chat bridge self-hosters point at their Letta server) reads when it recovers
from a stuck tool approval, driven the way it drives the server: the TypeScript SDK it depends on.

When a turn fails, lettabot looks up the conversation's latest run (`runs.list({agent_id, conversation_id,
limit: 1})`) and reads its `metadata.error.detail` and `stop_reason` to decide whether a pending approval blocks
the conversation; if so it denies the approval (or cancels the approval-blocked runs it finds by their
`stop_reason`) and retries. These tests pin what those runs say and what cancelling one does.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.typescript_sdk import NODE, install, run_js

pytestmark = [pytest.mark.skipif(NODE is None, reason="the TypeScript SDK needs node"), pytest.mark.timeout(300)]

MULTIPLY = '''def multiply(a: int, b: int) -> str:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return "product=" + str(a * b)
'''
BLOCKED = "Cannot send a new message: The agent is waiting for approval on a tool call."
# lettabot's setup: an upserted tool attached to the agent, a conversation, a turn that stops for approval.
SETUP = f"""
  const tool = await client.tools.upsert({{ source_code: {json.dumps(MULTIPLY)}, tags: ["lettabot"] }});
  const agent = await client.agents.create({{ model: "openai/gpt-4o-mini", embedding: "openai/text-embedding-3-small",
    memory_blocks: [{{ label: "persona", value: "I am a bot." }}] }});
  await client.agents.tools.attach(tool.id, {{ agent_id: agent.id }});
  await client.agents.tools.updateApproval("multiply", {{ agent_id: agent.id, requires_approval: true }});
  const conv = await client.conversations.create({{ agent_id: agent.id }});
  // (the SDK types this call as a stream whatever `streaming` says; lettabot never reads its answer)
  await client.conversations.messages.create(conv.id, {{
    messages: [{{ role: "user", content: "multiply" }}], streaming: false }});
  const latestRun = async () => {{
    for await (const run of await client.runs.list({{ agent_id: agent.id, conversation_id: conv.id, limit: 1 }})) {{
      return run;
    }}
  }};
"""


@pytest.fixture(scope="module")
def sdk() -> Path:
    return install()


def scenario(sdk: Path, server: LiveServer, mock_llm: MockLLM, body: str, *more: Reply) -> Any:
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("multiply", {"a": 6, "b": 7}, id="call_mul"), *more)
    return run_js(sdk, server.base_url, SETUP + body)


def test_a_stream_refused_by_a_pending_approval_leaves_a_run_that_names_it(
    sdk: Path, server: LiveServer, mock_llm: MockLLM
) -> None:
    out = scenario(
        sdk,
        server,
        mock_llm,
        """
  let thrown = null;
  try {
    const stream = await client.conversations.messages.create(conv.id, {
      messages: [{ role: "user", content: "hello again" }], streaming: true });
    for await (const chunk of stream) {}
  } catch (e) { thrown = e.error; }
  const run = await latestRun();
  const state = await client.agents.retrieve(agent.id);
  return { thrown, run, last: state.last_stop_reason };
""",
    )
    assert out["thrown"]["error_type"] == "internal_error" and BLOCKED in out["thrown"]["detail"]
    run = out["run"]
    # As Letta's stream service closes a run whose stream failed: stop reason `error`, the stream's error
    # message as metadata.error. lettabot reads `metadata.error.detail` to spot the approval conflict.
    assert (run["status"], run["stop_reason"]) == ("failed", "error")
    error = run["metadata"]["error"]
    assert error["message_type"] == "error_message" and error["run_id"] == run["id"]
    assert error["error_type"] == "internal_error" and BLOCKED in error["detail"] and BLOCKED in error["message"]
    assert error == {**out["thrown"], "run_id": run["id"]}
    assert out["last"] == "error"


def test_a_blocking_send_refused_by_a_pending_approval_keeps_the_error_text(
    sdk: Path, server: LiveServer, mock_llm: MockLLM
) -> None:
    out = scenario(
        sdk,
        server,
        mock_llm,
        """
  let thrown = null;
  try {
    await client.conversations.messages.create(conv.id, {
      messages: [{ role: "user", content: "hello again" }], streaming: false });
  } catch (e) { thrown = [e.status, e.error]; }
  const run = await latestRun();
  const state = await client.agents.retrieve(agent.id);
  return { thrown, run, last: state.last_stop_reason, conv: conv.id };
""",
    )
    status, body = out["thrown"]
    assert status == 409 and body["detail"]["code"] == "PENDING_APPROVAL"
    run = out["run"]
    # As Letta's blocking agent route closes it: str(error) and no stop reason; the agent's last stop reason is
    # untouched. (Letta's blocking conversation route left this run `created`, without its conversation_id: see
    # the README's compatibility notes.)
    assert (run["status"], run["stop_reason"]) == ("failed", None)
    assert run["conversation_id"] == out["conv"] and run["completed_at"] is not None
    assert run["metadata"]["error"].startswith("CONFLICT: " + BLOCKED)
    assert out["last"] == "requires_approval"


def test_cancelling_a_conversation_run_that_waits_for_approval_unblocks_that_conversation_only(
    sdk: Path, server: LiveServer, mock_llm: MockLLM
) -> None:
    # lettabot's agent-level recovery when no pending approval shows on the agent: list the approval-blocked runs,
    # cancel them (`agents.messages.cancel` with their ids), then send again.
    out = scenario(
        sdk,
        server,
        mock_llm,
        """
  await client.agents.messages.create(agent.id, { messages: [{ role: "user", content: "multiply too" }] });
  const blocked = [];
  for await (const run of await client.runs.list({ agent_id: agent.id, stop_reason: "requires_approval", limit: 10 })) {
    if (run.conversation_id === conv.id) blocked.push(run.id);
  }
  const cancelled = await client.agents.messages.cancel(agent.id, { run_ids: blocked });
  const run = await client.runs.retrieve(blocked[0]);
  const chunks = [];
  const stream = await client.conversations.messages.create(conv.id, {
    messages: [{ role: "user", content: "back in the conversation" }], streaming: true });
  for await (const chunk of stream) chunks.push(chunk);
  const tail = [];
  for await (const m of await client.conversations.messages.list(conv.id, { order: "desc" })) tail.push(m);
  const state = await client.agents.retrieve(agent.id, { include: ["agent.pending_approval"] });
  return { blocked, cancelled, run: [run.status, run.stop_reason], chunks, tail, pending: state.pending_approval };
""",
        Reply.tool_call("multiply", {"a": 1, "b": 2}, id="call_default"),
        Reply.text("Back again."),
    )
    (run_id,) = out["blocked"]
    assert out["cancelled"] == {run_id: "cancelled"} and out["run"] == ["cancelled", "cancelled"]
    # The cancel denied the conversation's pending call, so the conversation takes a normal message again.
    tail = out["tail"][::-1]
    kinds = [m["message_type"] for m in tail]
    assert kinds == [
        "system_message",
        "user_message",
        "approval_request_message",
        "approval_response_message",
        "tool_return_message",
        "user_message",
        "assistant_message",
    ]
    denial = next(m for m in tail if m["message_type"] == "approval_response_message")["approvals"][0]
    assert (denial["tool_call_id"], denial["approve"]) == ("call_mul", False)
    assert [c["content"] for c in out["chunks"] if c["message_type"] == "assistant_message"] == ["Back again."]
    # The default thread's own pending approval (the second send) is left alone.
    assert out["pending"]["tool_calls"][0]["name"] == "multiply"


def test_a_blocking_conversation_send_leaves_a_closed_run_of_that_conversation(
    sdk: Path, server: LiveServer, mock_llm: MockLLM
) -> None:
    # lettabot's getPendingApprovals(agent, conversation) finds approval-blocked runs by conversation_id; Letta's
    # blocking conversation route left such a run unlinked and `created` (see the README's compatibility notes).
    out = scenario(
        sdk,
        server,
        mock_llm,
        """
  const found = [];
  for await (const run of await client.runs.list({ agent_id: agent.id, conversation_id: conv.id,
    stop_reason: "requires_approval", limit: 10 })) found.push(run);
  const active = [];
  for await (const run of await client.runs.list({ agent_id: agent.id, active: true })) active.push(run.id);
  return { found, active };
""",
    )
    (run,) = out["found"]
    assert (run["status"], run["stop_reason"]) == ("completed", "requires_approval")
    assert run["metadata"] == {"run_type": "send_conversation_message"} and run["completed_at"] is not None
    assert out["active"] == []
