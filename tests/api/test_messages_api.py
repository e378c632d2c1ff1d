"""Sending and listing messages through the official letta-client (and raw HTTP where the wire format matters)."""

import json
import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply, usage_for
from tests.shared_paths import SAMPLES

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS, **kwargs)  # type: ignore[arg-type]


def send(http: httpx.Client, agent_id: str, text: str, **body: Any) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}], **body})


def sse_events(text: str) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of an SSE body."""
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = None, ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        events.append((name, data))
    return events


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


class TestSendBlocking:
    def test_reply_matches_sample_shape(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("echo: hello again"))
        request = json.loads((SAMPLES / "send_message_request.json").read_text())
        response = http.post(f"/v1/agents/{agent.id}/messages", json=request)
        assert response.status_code == 200, response.text
        body, sample = response.json(), json.loads((SAMPLES / "letta_response.json").read_text())
        assert list(body) == list(sample)
        [message] = body["messages"]
        assert list(message) == list(sample["messages"][0])
        assert message["message_type"] == "assistant_message" and message["content"] == "echo: hello again"
        assert message["run_id"].startswith("run-") and message["step_id"].startswith("step-")
        assert message["date"].endswith("+00:00") and "." not in message["date"]
        assert body["stop_reason"] == {"message_type": "stop_reason", "stop_reason": "end_turn"}
        assert list(body["usage"]) == list(sample["usage"])
        # The usage is what the provider reported for the one request it got.
        [sent] = mock_llm.requests
        reported = usage_for(sent, Reply.text("echo: hello again"))
        assert body["usage"]["step_count"] == 1
        assert [body["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")] == [
            reported["prompt_tokens"],
            reported["completion_tokens"],
            reported["total_tokens"],
        ]
        assert body["logprobs"] is None and body["turns"] is None

    def test_tool_call_then_reply(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        args = {"label": "human", "old_string": "Bob.", "new_string": "Bob. Bob likes go."}
        mock_llm.script(Reply.tool_call("memory_replace", args), Reply.text("ack"))
        body = send(http, agent.id, "remember go").json()
        sample = json.loads((SAMPLES / "letta_response_tool_call.json").read_text())
        types = [m["message_type"] for m in body["messages"]]
        assert types == [m["message_type"] for m in sample["messages"]]
        for got, want in zip(body["messages"], sample["messages"], strict=True):
            assert list(got) == list(want)
        call, result, reply = body["messages"]
        assert call["tool_call"]["name"] == "memory_replace" and call["tool_calls"][0] == call["tool_call"]
        assert result["status"] == "success" and "Bob likes go." in result["tool_return"]
        assert reply["content"] == "ack"
        assert body["usage"]["step_count"] == 2
        assert "Bob likes go." in client.agents.blocks.retrieve("human", agent_id=agent.id).value

    def test_memgpt_v2_send_message_shows_as_assistant(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client, agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet Bob.", "message": "Hi Bob!"}))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])
        assert [m.message_type for m in response.messages] == ["reasoning_message", "assistant_message"]
        assert response.messages[0].reasoning == "Greet Bob."  # type: ignore[union-attr]
        assert response.messages[1].content == "Hi Bob!"  # type: ignore[union-attr]
        assert response.stop_reason.stop_reason == "end_turn"

    def test_include_return_message_types_filters(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "cat"}), Reply.text("ok"))
        body = send(http, agent.id, "x", include_return_message_types=["assistant_message"]).json()
        assert [m["message_type"] for m in body["messages"]] == ["assistant_message"]

    def test_input_shorthand(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("short"))
        response = client.agents.messages.create(agent.id, input="hi")
        assert response.messages[0].content == "short"  # type: ignore[union-attr]
        assert mock_llm.requests[-1]["messages"][-1] == {"role": "user", "content": "hi"}

    def test_empty_messages_422(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        response = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": []})
        assert response.status_code == 422
        assert response.json() == {"detail": "Messages must not be empty"}

    @pytest.mark.parametrize(
        ("route", "body"),
        [
            ("messages", {"messages": [{"role": "user", "content": ""}]}),
            ("messages", {"input": []}),
            ("messages", {"input": "", "streaming": True}),
            ("messages/stream", {"messages": [{"role": "user", "content": []}]}),
            ("messages/async", {"input": ""}),
            ("messages/preview-raw-payload", {"input": ""}),
        ],
    )
    def test_empty_content_400_before_anything_is_stored(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, route: str, body: dict[str, Any]
    ) -> None:
        agent = make_agent(client)
        before = [m.id for m in client.agents.messages.list(agent.id).items]
        response = http.post(f"/v1/agents/{agent.id}/{route}", json=body)
        assert response.status_code == 400
        assert response.json() == {"detail": "Message content is empty or invalid"}
        assert mock_llm.requests == []
        assert [m.id for m in client.agents.messages.list(agent.id).items] == before
        assert client.runs.list(agent_ids=[agent.id]).items == []

    def test_stream_options_without_streaming_422(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        response = send(http, agent.id, "x", stream_tokens=True)
        assert response.status_code == 422
        assert "stream_tokens can only be true when streaming=true" in response.json()["detail"]

    def test_unknown_agent_404(self, http: httpx.Client) -> None:
        missing = "agent-00000000-0000-4000-8000-000000000001"
        response = send(http, missing, "x")
        assert response.status_code == 404
        assert response.json() == {"detail": f"Agent with ID {missing} not found"}


class TestSendErrors:
    def test_llm_failure_gives_letta_error_shape_and_agent_still_works(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.error(500, times=10))
        response = send(http, agent.id, "fail please")
        assert response.status_code == 500
        error = response.json()["error"]
        assert error["type"] == "llm_error" and error["message"] and error["detail"]
        mock_llm.reset()
        mock_llm.script(Reply.text("back"))
        assert send(http, agent.id, "again").json()["messages"][0]["content"] == "back"
        history = client.agents.messages.list(agent.id).items
        # The failed turn left no trace: its input was never stored.
        assert [m.content for m in history if m.message_type == "user_message"] == ["again"]

    def test_pending_approval_409_then_stream_error(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client, tool_rules=[{"type": "requires_approval", "tool_name": "memory_insert"}])
        mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "x"}))
        first = send(http, agent.id, "insert").json()
        assert first["stop_reason"]["stop_reason"] == "requires_approval"
        request_id = first["messages"][-1]["id"]
        blocked = send(http, agent.id, "another")
        assert blocked.status_code == 409
        detail = blocked.json()["detail"]
        assert detail["code"] == "PENDING_APPROVAL" and detail["pending_request_id"] == request_id
        assert detail["message"].startswith("CONFLICT: Cannot send a new message")
        streamed = http.post(
            f"/v1/agents/{agent.id}/messages/stream", json={"messages": [{"role": "user", "content": "again"}]}
        )
        assert streamed.status_code == 200
        events = sse_events(streamed.text)
        assert json.loads(events[0][1])["message_type"] == "ping"
        assert json.loads(events[1][1]) == {"message_type": "stop_reason", "stop_reason": "error"}
        name, data = events[2]
        assert name == "error" and json.loads(data)["error_type"] == "internal_error"
        assert events[-1] == (None, "[DONE]")


class TestStreaming:
    def test_raw_sse_matches_letta(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("echo: hello sse"))
        url = f"/v1/agents/{agent.id}/messages/stream"
        response = http.post(url, json={"messages": [{"role": "user", "content": "hello sse"}]})
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert response.text.endswith("data: [DONE]\n\n")
        events = sse_events(response.text)
        ping, reply, stop, usage = (json.loads(data) for _, data in events[:4])
        assert ping["message_type"] == "ping" and ping["id"].startswith("ping-") and ping["run_id"].startswith("run-")
        assert reply["message_type"] == "assistant_message" and reply["content"] == "echo: hello sse"
        assert reply["run_id"] == ping["run_id"]
        assert stop == {"message_type": "stop_reason", "stop_reason": "end_turn"}
        assert usage["message_type"] == "usage_statistics" and usage["step_count"] == 1
        assert events[4] == (None, "[DONE]") and len(events) == 5
        # Only background streams number their chunks; here seq_id stays null, as in Letta's sample.
        assert ping["seq_id"] is None and reply["seq_id"] is None
        # Compact JSON, as Letta writes it.
        assert '"message_type":"assistant_message"' in response.text

    def test_sdk_stream_yields_typed_chunks(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("streamed"))
        stream = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}], streaming=True)
        chunks = list(stream)  # type: ignore[call-overload]
        types = [c.message_type for c in chunks]
        assert types == ["ping", "assistant_message", "stop_reason", "usage_statistics"]
        assert chunks[1].content == "streamed"

    def test_stream_tokens_sends_fragments_once(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("hello token world, streamed in pieces"))
        chunks = list(
            client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "hi"}], stream_tokens=True)
        )
        parts = [c for c in chunks if c.message_type == "assistant_message"]
        assert len(parts) > 1
        assert len({p.id for p in parts}) == 1
        # Each fragment names its step, as Letta's do: the step that stored the message.
        [listed] = [m for m in client.agents.messages.list(agent.id).items if m.id == parts[0].id]
        assert listed.step_id and {p.step_id for p in parts} == {listed.step_id}
        assert "".join(p.content for p in parts) == "hello token world, streamed in pieces"  # type: ignore[misc]
        assert chunks[-1].message_type == "usage_statistics"

    def test_stream_tokens_tool_call_fragments_then_whole_return(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        args = {"label": "human", "new_string": "Bob has a cat."}
        mock_llm.script(Reply.tool_call("memory_insert", args), Reply.text("ack"))
        body = {"messages": [{"role": "user", "content": "cat"}], "stream_tokens": True}
        events = sse_events(http.post(f"/v1/agents/{agent.id}/messages/stream", json=body).text)
        chunks = [json.loads(data) for _, data in events[:-1]]
        calls = [c for c in chunks if c["message_type"] == "tool_call_message"]
        assert calls and len({c["id"] for c in calls}) == 1
        # Fragments carry one delta object (not a list) with null keys left out.
        assert all(isinstance(c["tool_calls"], dict) and c["tool_call"] == c["tool_calls"] for c in calls)
        assert calls[0]["tool_call"]["name"] == "memory_insert" and "arguments" not in calls[0]["tool_call"]
        assert json.loads("".join(c["tool_call"].get("arguments", "") for c in calls)) == args
        [result] = [c for c in chunks if c["message_type"] == "tool_return_message"]
        assert result["status"] == "success" and isinstance(result["tool_returns"], list)
        types = [c["message_type"] for c in chunks]
        assert types[0] == "ping" and types[-2:] == ["stop_reason", "usage_statistics"]
        assert types.index("tool_return_message") > max(i for i, t in enumerate(types) if t == "tool_call_message")

    def test_streaming_true_needs_a_v1_sdk(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        response = http.post(
            f"/v1/agents/{agent.id}/messages",
            json={"messages": [{"role": "user", "content": "x"}], "streaming": True},
            headers={"User-Agent": "curl/8.5.0"},
        )
        assert response.status_code == 422
        assert response.json() == {"detail": "streaming=true is only supported for SDK v1.0+ clients."}

    def test_llm_error_arrives_in_stream(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.error(500, times=10))
        url = f"/v1/agents/{agent.id}/messages/stream"
        response = http.post(url, json={"messages": [{"role": "user", "content": "x"}]})
        assert response.status_code == 200
        events = sse_events(response.text)
        assert json.loads(events[1][1]) == {"message_type": "stop_reason", "stop_reason": "llm_api_error"}
        name, data = events[2]
        error = json.loads(data)
        assert name == "error" and error["message_type"] == "error_message"
        assert error["error_type"] == "llm_error" and error["run_id"] == json.loads(events[0][1])["run_id"]
        assert events[3] == (None, "[DONE]") and len(events) == 4

    @pytest.mark.parametrize(("status", "blocking_type"), [(400, "llm_bad_request"), (402, "llm_insufficient_credits")])
    def test_llm_errors_letta_does_not_name_in_streams_are_llm_error(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, status: int, blocking_type: str
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.error(status, times=10, message="the provider said no"))
        blocking = send(http, agent.id, "x")
        assert blocking.json()["error"]["type"] == blocking_type  # a blocking send keeps the precise type
        mock_llm.reset()
        mock_llm.script(Reply.error(status, times=10, message="the provider said no"))
        response = http.post(f"/v1/agents/{agent.id}/messages/stream", json={"input": "x", "stream_tokens": True})
        [data] = [d for n, d in sse_events(response.text) if n == "error"]
        error = json.loads(data)
        assert error["error_type"] == "llm_error" and error["message"] == "An error occurred with the LLM request."
        assert error["detail"] == blocking.json()["error"]["detail"]  # the cause, as Letta's str(error)
        assert "the provider said no" in error["detail"]


class TestSendAsync:
    def test_returns_run_then_completes(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(0.3, Reply.text("later")))
        run = client.agents.messages.create_async(agent.id, messages=[{"role": "user", "content": "hi"}])
        # Letta answers with the run as it was created, before its background task starts.
        assert run.id.startswith("run-") and run.status == "created"
        assert run.background is True and (run.metadata or {})["run_type"] == "send_message_async"
        deadline = time.monotonic() + 10
        while client.runs.retrieve(run.id).status in ("created", "running") and time.monotonic() < deadline:
            time.sleep(0.05)
        done = client.runs.retrieve(run.id)
        assert done.status == "completed" and done.stop_reason == "end_turn"
        replies = [m for m in client.runs.messages.list(run.id).items if m.message_type == "assistant_message"]
        assert [m.content for m in replies] == ["later"]


class TestCancel:
    def test_nothing_running_409(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        response = http.post(f"/v1/agents/{agent.id}/messages/cancel")
        assert response.status_code == 409
        assert response.json() == {"detail": f"CONFLICT: No active runs to cancel for agent {agent.id}"}

    def test_cancels_a_running_async_run(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(
            Reply.delay(0.5, Reply.tool_call("memory_insert", {"label": "human", "new_string": "x"})),
            Reply.text("never"),
        )
        run = client.agents.messages.create_async(agent.id, messages=[{"role": "user", "content": "hi"}])
        result = client.agents.messages.cancel(agent.id)
        assert result == {run.id: "cancelled"}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not client.runs.retrieve(run.id).completed_at:
            time.sleep(0.05)
        done = client.runs.retrieve(run.id)
        assert done.status == "cancelled" and done.stop_reason == "cancelled"

    def test_unknown_run_reported_failed(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        missing = "run-00000000-0000-4000-8000-000000000000"
        response = http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [missing]})
        assert response.json() == {missing: "failed"}


class TestCancelPendingApproval:
    def test_cancel_denies_the_pending_call_and_unblocks_the_agent(self, client, http, mock_llm) -> None:  # type: ignore[no-untyped-def]
        from tests.mock_llm import Reply

        mock_llm.reset()
        agent = client.agents.create(model="openai/gpt-4o-mini", memory_blocks=[{"label": "human", "value": "Bob"}])
        http.patch(f"/v1/agents/{agent.id}/tools/approval/memory_insert", json={"requires_approval": True})
        mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "likes tea"}))
        first = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "tea"}]})
        assert first.json()["stop_reason"]["stop_reason"] == "requires_approval"
        run_id = first.json()["messages"][-1]["run_id"]
        blocked = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "x"}]})
        assert blocked.status_code == 409

        cancelled = http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [run_id]})
        assert cancelled.json() == {run_id: "cancelled"}
        mock_llm.script(Reply.text("ok then"))
        again = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
        assert again.status_code == 200
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Bob"
