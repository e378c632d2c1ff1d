"""``/v1/conversations/{id}/...`` turns: compact, recompile, preview, streamed and background sends, resume, busy
409, cancel, concurrency, approvals, V2 agents (letta-client 1.12.1 and httpx against the live server)."""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import EMBEDDING, MODEL, make_agent, send, system_text
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def test_compact_keeps_history_order(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    fresh = http.post(f"/v1/conversations/{conv.id}/compact", json={})
    assert fresh.status_code == 400
    for n in range(4):
        mock_llm.script(Reply.text(f"reply {n} " + "words " * 30))
        send(http, conv.id, f"message {n} " + "talk " * 30)
    before = [m.id for m in client.conversations.messages.list(conv.id, order="asc", limit=100)]
    window_before = client.conversations.retrieve(conv.id).in_context_message_ids

    mock_llm.script(Reply.text("SUMMARY: they talked"))
    compacted = client.conversations.messages.compact(conv.id)
    assert compacted.num_messages_after < compacted.num_messages_before == len(window_before)
    window_after = client.conversations.retrieve(conv.id).in_context_message_ids
    assert len(window_after) == compacted.num_messages_after and window_after[0] == window_before[0]

    after = client.conversations.messages.list(conv.id, order="asc", limit=100).items
    assert [m.id for m in after][: len(before)] == before  # append-only: nothing renumbered or reordered
    assert len(after) == len(before) + 1 and "they talked" in str(after[-1].content)
    dates = [m.date for m in after]
    assert dates == sorted(dates)
    # Cursors page through the same order.
    page = client.conversations.messages.list(conv.id, order="asc", after=before[2], limit=3).items
    assert [m.id for m in page] == before[3:6]
    mock_llm.script(Reply.text("after compaction"))
    send(http, conv.id, "still there?")
    assert "they talked" in json.dumps(mock_llm.requests[-1]["messages"])


def test_recompile_dry_run_and_preview(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    created = http.post(f"/v1/conversations/?agent_id={agent.id}", json={"isolated_block_labels": ["human"]}).json()
    conv_id = created["id"]
    [copy_id] = created["isolated_block_ids"]
    client.blocks.update(copy_id, value="username: robin")
    stored = system_text(client, conv_id)

    dry = json.loads(client.conversations.recompile(conv_id, dry_run=True))  # the SDK hands back the raw JSON string
    assert "username: robin" in dry and f"CONVERSATION_ID: {conv_id}" in dry
    assert system_text(client, conv_id) == stored  # dry_run saves nothing
    saved = json.loads(client.conversations.recompile(conv_id))
    assert "username: robin" in saved and system_text(client, conv_id) == saved

    payload = http.post(
        f"/v1/conversations/{conv_id}/messages/preview-raw-payload", json={"input": "preview me"}
    ).json()
    assert mock_llm.requests == []
    assert payload["messages"][0]["content"] == saved
    assert payload["messages"][-1] == {"role": "user", "content": "preview me"}
    assert http.post("/v1/conversations/default/recompile", json={"agent_id": agent.id}).status_code == 200


def active_run(http: httpx.Client, agent_id: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """Wait for the agent's one active run (created or running) and return it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = http.get("/v1/runs/active", params={"agent_id": agent_id}).json()
        if runs:
            return runs[0]  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError("no active run appeared")


def test_busy_conversation_gets_409_with_the_run_id(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.delay(2.0, then=Reply.text("slow")), Reply.text("default thread is free"))
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(send, http, conv.id, "slow one")
        run = active_run(http, agent.id)
        assert run["conversation_id"] == conv.id
        for streaming in (False, True):
            touched = client.conversations.retrieve(conv.id).last_message_at
            busy = http.post(
                f"/v1/conversations/{conv.id}/messages",
                json={"messages": [{"role": "user", "content": "me too"}], "streaming": streaming},
            )
            assert busy.status_code == 409, busy.text
            assert busy.json()["run_id"] == run["id"] and "CONFLICT" in busy.json()["detail"]
            # As in Letta, a request that arrives marks the conversation's last message time, even when refused.
            after = client.conversations.retrieve(conv.id).last_message_at
            assert touched is not None and after is not None and after > touched
        # Another thread of the same agent has its own key: the default thread is not busy.
        assert send(http, "default", "meanwhile", agent_id=agent.id)["stop_reason"]["stop_reason"] == "end_turn"
        assert first.result()["stop_reason"]["stop_reason"] == "end_turn"
    history = client.conversations.messages.list(conv.id, order="asc").items
    assert [m.message_type for m in history] == ["system_message", "user_message", "assistant_message"]


def test_cancel(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    idle = http.post(f"/v1/conversations/{conv.id}/cancel")
    assert idle.status_code == 409
    assert idle.json() == {"detail": f"CONFLICT: No active runs to cancel for conversation {conv.id}"}

    mock_llm.script(Reply.delay(2.0, then=Reply.text("too late")))
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(send, http, conv.id, "slow one")
        run = active_run(http, agent.id)
        # The default thread's cancel (Letta Code sends the agent id as the path) leaves conversations alone.
        assert http.post(f"/v1/conversations/{agent.id}/cancel").status_code == 409
        assert http.post("/v1/conversations/default/cancel", params={"agent_id": agent.id}).status_code == 409
        assert client.runs.retrieve(run["id"]).status in ("created", "running")
        assert client.conversations.cancel(conv.id) == {run["id"]: "cancelled"}
        first.result()
    assert client.runs.retrieve(run["id"]).status == "cancelled"


def test_streamed_send_and_the_conversation_model(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(
        agent_id=agent.id,
        model="openai/gpt-4o",
        model_settings={"provider_type": "openai", "temperature": 0.25},
    )
    assert conv.model == "openai/gpt-4o" and conv.model_settings is not None
    mock_llm.script(Reply.text("streamed hello"))
    stream = client.conversations.messages.create(conv.id, messages=[{"role": "user", "content": "hi"}])
    kinds = [chunk.message_type for chunk in stream]
    assert kinds == ["ping", "assistant_message", "stop_reason", "usage_statistics"]
    sent = mock_llm.requests[-1]
    assert sent["model"] == "gpt-4o" and sent["temperature"] == 0.25  # the conversation's model, not the agent's
    runs = http.get("/v1/runs/", params={"agent_id": agent.id}).json()
    assert [(r["conversation_id"], r["metadata"]["run_type"]) for r in runs] == [(conv.id, "send_conversation_message")]
    assert client.conversations.retrieve(conv.id).last_message_at is not None

    mock_llm.script(Reply.text("override wins"))
    send(http, conv.id, "again", override_model=MODEL)
    assert mock_llm.requests[-1]["model"] == "gpt-4o-mini"


def test_background_send_and_resume_by_conversation(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "rivers"}), Reply.text("the rivers answer"))
    payload = {"messages": [{"role": "user", "content": "rivers?"}], "background": True, "stream_tokens": False}
    sent = http.post(f"/v1/conversations/{conv.id}/messages", json=payload)
    assert sent.status_code == 200, sent.text
    full = [json.loads(line[6:]) for line in sent.text.splitlines() if line.startswith("data: {")]
    numbered = [c for c in full if c.get("seq_id") is not None]
    assert len(numbered) >= 4
    run_id = numbered[0]["run_id"]
    assert client.runs.retrieve(run_id).conversation_id == conv.id

    cut = numbered[1]["seq_id"]
    resumed = client.conversations.messages.stream(conv.id, run_id=run_id, starting_after=cut, include_pings=False)
    after = [chunk.seq_id for chunk in resumed if getattr(chunk, "seq_id", None) is not None]
    assert after == [c["seq_id"] for c in numbered if c["seq_id"] > cut]
    # Nothing is active on the agent's own thread, so there is nothing to resume there.
    default = http.post("/v1/conversations/default/stream", json={"agent_id": agent.id})
    assert default.status_code == 400


@pytest.mark.parametrize("senders", [2, 50])
def test_concurrent_streamed_sends(client: Letta, server: Any, mock_llm: MockLLM, senders: int) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)

    def one(n: int) -> tuple[int, dict[str, Any] | None]:
        with httpx.Client(base_url=server.base_url, timeout=60) as own:
            response = own.post(
                f"/v1/conversations/{conv.id}/messages", json={"messages": [{"role": "user", "content": f"m{n}"}]}
            )
            return response.status_code, (response.json() if response.status_code != 200 else None)

    with ThreadPoolExecutor(senders) as pool:
        results = list(pool.map(one, range(senders)))
    assert {status for status, _ in results} <= {200, 409}
    ok = [n for n, (status, _) in enumerate(results) if status == 200]
    assert ok
    for status, busy in results:
        if status == 409:
            assert busy is not None and busy["run_id"].startswith("run-") and "CONFLICT" in busy["detail"]
    window = client.conversations.retrieve(conv.id).in_context_message_ids
    assert len(window) == len(set(window)) == 1 + 2 * len(ok)  # each accepted turn: its input and its reply
    history = client.conversations.messages.list(conv.id, order="asc", limit=1000).items
    assert sorted(m.content for m in history if m.message_type == "user_message") == sorted(f"m{n}" for n in ok)


def test_approvals_in_a_conversation(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    gated = http.patch(f"/v1/agents/{agent.id}/tools/approval/memory_replace", params={"requires_approval": "true"})
    assert gated.status_code == 200, gated.text
    conv = client.conversations.create(agent_id=agent.id)
    edit = {"label": "human", "old_string": "sarah", "new_string": "sam"}

    mock_llm.script(Reply.tool_call("memory_replace", edit, id="call_a"))
    asked = send(http, conv.id, "rename me")
    assert asked["stop_reason"]["stop_reason"] == "requires_approval"
    mock_llm.script(Reply.text("renamed"))
    approval = {"type": "approval", "approvals": [{"type": "approval", "tool_call_id": "call_a", "approve": True}]}
    done = http.post(f"/v1/conversations/{conv.id}/messages", json={"messages": [approval], "streaming": False})
    assert done.status_code == 200, done.text
    assert [m["message_type"] for m in done.json()["messages"]][-1] == "assistant_message"
    assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "username: sam"  # shared block
    assert len(client.agents.retrieve(agent.id).message_ids or []) == 1

    # A pending approval left by a run is denied when that run is cancelled, in the conversation's own window.
    mock_llm.script(Reply.tool_call("memory_replace", {**edit, "old_string": "sam"}, id="call_b"))
    pending = send(http, conv.id, "again")
    run_id = pending["messages"][0]["run_id"]
    cancelled = http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [run_id]})
    assert cancelled.json() == {run_id: "cancelled"}
    mock_llm.script(Reply.text("free again"))
    assert send(http, conv.id, "hello?")["stop_reason"]["stop_reason"] == "end_turn"
    assert "cancelled the request" in json.dumps(mock_llm.requests[-1]["messages"])


def test_v2_agent_in_a_conversation(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, agent_type="memgpt_v2_agent")
    conv = client.conversations.create(agent_id=agent.id)
    before = list(client.agents.retrieve(agent.id).message_ids or [])
    mock_llm.script(Reply.tool_call("send_message", {"message": "hello from v2"}))
    sent = send(http, conv.id, "hi v2")
    assert sent["stop_reason"]["stop_reason"] == "end_turn"
    assert list(client.agents.retrieve(agent.id).message_ids or []) == before  # nothing written to the default thread
    window = client.conversations.retrieve(conv.id).in_context_message_ids
    assert len(window) == 4  # system, user, the send_message call, its return


def test_context_window_of_a_conversation(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id, context_window_limit=4000)
    mock_llm.script(Reply.text("hi"))
    run_id = send(http, conv.id, "hello")["messages"][0]["run_id"]
    [step] = http.get(f"/v1/runs/{run_id}/steps").json()
    assert step["context_window_limit"] == 4000  # the conversation's limit, below the agent's window
    own = http.get(f"/v1/agents/{agent.id}/context", params={"conversation_id": conv.id}).json()
    default = http.get(f"/v1/agents/{agent.id}/context", params={"conversation_id": "default"}).json()
    assert own["num_messages"] == 3 and default["num_messages"] == 1
    assert f"CONVERSATION_ID: {conv.id}" in json.dumps(own) and conv.id not in json.dumps(default)


def test_a_send_arrives_in_one_statement_with_each_404_and_retry_as_before(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """The send route's one arrival statement (`turns/conversation_arrival`): each kind of thread id keeps its 404,
    an unknown conversation is touched nowhere, and a retry with the same otids attaches to its first run (in a
    conversation, and in the agent's own thread through `default` and the agent-id alias) without a second turn."""
    agent = make_agent(client)
    unknown_conv = "conv-00000000-0000-4000-8000-000000000000"
    unknown_agent = "agent-00000000-0000-4000-8000-000000000000"
    hi = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}
    missing = http.post(f"/v1/conversations/{unknown_conv}/messages", json=hi)
    assert missing.status_code == 404 and "Conversation" in missing.text, missing.text
    for path, extra in ((unknown_agent, {}), ("default", {"agent_id": unknown_agent})):
        gone = http.post(f"/v1/conversations/{path}/messages", json={**hi, **extra})
        assert gone.status_code == 404 and "Agent" in gone.text, gone.text
    assert mock_llm.requests == []

    conv = client.conversations.create(agent_id=agent.id)
    threads = [(conv.id, {}), ("default", {"agent_id": agent.id}), (agent.id, {})]
    for n, (path, extra) in enumerate(threads):
        mock_llm.script(Reply.text(f"once {n}"))
        message = {"role": "user", "content": f"retry me {n}", "otid": f"otid-retry-{n}-{conv.id}"}
        body = {"messages": [message], "streaming": True, "background": True, **extra}
        first = http.post(f"/v1/conversations/{path}/messages", json=body)
        again = http.post(f"/v1/conversations/{path}/messages", json=body)
        assert first.status_code == again.status_code == 200, (first.text, again.text)
        assert again.text == first.text and f"once {n}" in first.text  # the first run's stream, replayed
    assert len(mock_llm.requests) == len(threads)
    history = client.conversations.messages.list(conv.id, order="asc").items
    assert [m.message_type for m in history] == ["system_message", "user_message", "assistant_message"]
    own = http.get(f"/v1/conversations/{agent.id}/messages", params={"order": "asc"}).json()
    assert [m["message_type"] for m in own].count("user_message") == 2


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("thread", ["conversation", "default"])
def test_empty_content_400_before_anything_is_stored(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, streaming: bool, thread: str
) -> None:
    agent = make_agent(client)
    conv_id = client.conversations.create(agent_id=agent.id).id if thread == "conversation" else "default"
    params = {"agent_id": agent.id} if thread == "default" else {}
    before = http.get(f"/v1/conversations/{conv_id}/messages", params=params).json()
    body = {"input": "", "streaming": streaming, **params}
    response = http.post(f"/v1/conversations/{conv_id}/messages", json=body)
    assert response.status_code == 400
    assert response.json() == {"detail": "Message content is empty or invalid"}
    assert mock_llm.requests == []
    assert http.get(f"/v1/conversations/{conv_id}/messages", params=params).json() == before
    assert client.runs.list(agent_ids=[agent.id]).items == []


def test_stream_options_on_a_blocking_send_are_ignored(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    # Letta's agent route refuses them with a 422; its conversation route lets them through and answers JSON.
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("a plain answer"))
    options = {"stream_tokens": True, "include_pings": False, "background": True}
    response = http.post(f"/v1/conversations/{conv.id}/messages", json={"input": "hi", "streaming": False, **options})
    assert response.status_code == 200, response.text
    assert response.json()["messages"][-1]["content"] == "a plain answer"
    [run] = client.runs.list(agent_ids=[agent.id]).items
    assert run.background is False and run.status == "completed"
