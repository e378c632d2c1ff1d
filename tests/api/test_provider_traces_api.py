"""Provider traces (`GET /v1/steps/{id}/trace`, the deprecated `GET /v1/telemetry/{id}`): each agent step keeps
the exact request memlet posted to the model and the answer, as Letta 0.16.8 does by default; with
`MEMLET_TRACK_PROVIDER_TRACE` off none is kept and the routes answer null; they go with their agent."""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.config import Settings
from memlet.db.engine import async_url
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.mock_llm.openai_wire import usage_for

GPT = "openai/gpt-4o-mini"
SONNET = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, model: str = GPT, **extra: Any) -> Any:
    return client.agents.create(model=model, embedding=EMBEDDING, **extra)


def steps_of(client: Letta, run_id: str) -> list[Any]:
    return list(client.runs.steps.list(run_id=run_id, order="asc"))


def trace_rows(pg_uri: str, agent_id: str) -> int:
    async def count() -> int:
        engine = create_async_engine(async_url(pg_uri))
        try:
            async with engine.connect() as conn:
                query = text("SELECT count(*) FROM provider_traces WHERE agent_id = :a")
                return int((await conn.execute(query, {"a": agent_id})).scalar_one())
        finally:
            await engine.dispose()

    return asyncio.run(count())


def test_a_one_step_send_keeps_the_request_sent_and_the_completion(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent = make_agent(client, tags=["b", "a"])
    mock_llm.script(Reply.text("hello there"))
    response = client.agents.messages.create(agent_id=agent.id, input="hi")
    run_id = response.messages[-1].run_id
    [step] = steps_of(client, run_id)
    [sent] = mock_llm.requests

    trace = client.steps.trace.retrieve(step.id)
    assert trace is not None
    assert trace.id.startswith("provider_trace-")
    assert trace.request_json == sent  # the body exactly as the model received it
    assert (trace.step_id, trace.agent_id, trace.run_id, trace.call_type) == (step.id, agent.id, run_id, "agent_step")
    assert trace.agent_tags == ["a", "b"]
    assert trace.llm_config == http.get(f"/v1/agents/{agent.id}").json()["llm_config"]
    # A blocking send: the provider's whole chat.completion, as Letta's request adapter keeps it.
    completion = trace.response_json
    assert completion["object"] == "chat.completion"
    assert completion["id"].startswith("chatcmpl-mock-") and completion["model"] == sent["model"]
    assert completion["choices"][0]["message"]["content"] == "hello there"
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert completion["usage"] == usage_for(sent, Reply.text("hello there"))

    raw = http.get(f"/v1/steps/{step.id}/trace").json()
    assert raw["org_id"] == "org-00000000-0000-4000-8000-000000000000"
    assert raw["created_by_id"] == raw["user_id"] and raw["source"] is None and raw["billing_context"] is None
    # The deprecated route answers the same trace.
    assert http.get(f"/v1/telemetry/{step.id}").json() == raw


def test_a_streamed_tool_turn_keeps_each_steps_request_and_letta_s_stream_summary(
    client: Letta, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    call = Reply.tool_call("conversation_search", {"query": "weather"}, id="call_trace_1")
    mock_llm.script(call, Reply.text("all done"))
    chunks = list(client.agents.messages.stream(agent_id=agent.id, input="search", stream_tokens=True))
    run_id = next(c.run_id for c in chunks if getattr(c, "run_id", None))
    first, second = steps_of(client, run_id)
    assert len(mock_llm.requests) == 2

    one = client.steps.trace.retrieve(first.id)
    two = client.steps.trace.retrieve(second.id)
    assert one is not None and two is not None
    assert one.request_json == mock_llm.requests[0] and one.request_json["stream"] is True
    assert two.request_json == mock_llm.requests[1]
    assert one.id != two.id

    # Letta's streaming adapter keeps a summary: the last tool call and the content parts, each as JSON text.
    summary = one.response_json
    assert (summary["role"], summary["type"]) == ("assistant", "message")
    assert summary["id"].startswith("chatcmpl-mock-")
    tool_call = json.loads(summary["content"]["tool_call"])
    assert tool_call == {
        "id": "call_trace_1",
        "type": "function",
        "function": {"arguments": json.dumps({"query": "weather"}), "name": "conversation_search"},
    }
    assert summary["usage"] == usage_for(mock_llm.requests[0], call)
    answer = two.response_json
    assert answer["content"]["tool_call"] is None
    assert [json.loads(p) for p in answer["content"]["content"]] == [
        {"type": "text", "text": "all done", "signature": None}
    ]


def test_an_anthropic_step_keeps_the_message(claude: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(claude, SONNET)
    mock_llm.script(Reply.text("bonjour"))
    response = claude.agents.messages.create(agent_id=agent.id, input="hi")
    [step] = steps_of(claude, response.messages[-1].run_id)
    trace = claude.steps.trace.retrieve(step.id)
    assert trace is not None
    # The mock notes the API and beta header it was called with under `_` keys: not part of the body.
    body = {k: v for k, v in mock_llm.requests[0].items() if not k.startswith("_")}
    assert trace.request_json == body and body["stream"] is True
    message = trace.response_json
    assert (message["type"], message["role"], message["stop_reason"]) == ("message", "assistant", "end_turn")
    assert message["id"].startswith("msg_mock_")
    assert message["content"] == [{"type": "text", "text": "bonjour"}]
    assert message["usage"]["output_tokens"] > 0


def test_unknown_steps_answer_null_and_malformed_ids_422(client: Letta, http: httpx.Client) -> None:
    assert client.steps.trace.retrieve("step-00000000-0000-4000-8000-000000000000") is None
    assert http.get("/v1/telemetry/anything").json() is None
    assert http.get("/v1/steps/nope/trace").status_code == 422


def test_deleting_the_agent_removes_its_traces(client: Letta, mock_llm: MockLLM, pg_uri: str) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("one"), Reply.text("two"))
    client.agents.messages.create(agent_id=agent.id, input="a")
    response = client.agents.messages.create(agent_id=agent.id, input="b")
    [step] = steps_of(client, response.messages[-1].run_id)
    assert trace_rows(pg_uri, agent.id) == 2
    client.agents.delete(agent.id)
    assert trace_rows(pg_uri, agent.id) == 0
    assert client.steps.trace.retrieve(step.id) is None


@pytest.fixture(scope="module")
def untraced_server(settings: Settings) -> Iterator[LiveServer]:
    live = LiveServer(settings.model_copy(update={"track_provider_trace": False})).start()
    yield live
    live.stop()


def test_tracking_off_writes_nothing_and_answers_null(
    untraced_server: LiveServer, server: LiveServer, mock_llm: MockLLM, pg_uri: str
) -> None:
    client = Letta(base_url=untraced_server.base_url, max_retries=0, timeout=60)
    agent = make_agent(client)
    mock_llm.script(Reply.text("quiet"))
    response = client.agents.messages.create(agent_id=agent.id, input="hi")
    [step] = steps_of(client, response.messages[-1].run_id)
    assert trace_rows(pg_uri, agent.id) == 0
    assert client.steps.trace.retrieve(step.id) is None
    assert httpx.get(f"{untraced_server.base_url}/v1/telemetry/{step.id}").json() is None
    # A trace written while tracking was on is not served while it is off, as in Letta.
    traced = Letta(base_url=server.base_url, max_retries=0, timeout=60)
    mock_llm.script(Reply.text("loud"))
    again = traced.agents.messages.create(agent_id=agent.id, input="hi")
    [kept] = steps_of(traced, again.messages[-1].run_id)
    assert traced.steps.trace.retrieve(kept.id) is not None
    assert client.steps.trace.retrieve(kept.id) is None


def test_a_conversation_turn_with_a_memory_edit_keeps_every_steps_trace(client: Letta, mock_llm: MockLLM) -> None:
    """Letta Code's shape: a streamed conversation turn; its memory edit is committed by another statement."""
    agent = make_agent(client, memory_blocks=[{"label": "human", "value": "Name: Bob"}])
    conversation = client.conversations.create(agent_id=agent.id)
    mock_llm.script(
        Reply.tool_call("memory_replace", {"label": "human", "old_string": "Bob", "new_string": "Ann"}),
        Reply.text("noted"),
    )
    messages = [{"role": "user", "content": "I am Ann"}]
    chunks = list(client.conversations.messages.create(conversation.id, messages=messages))  # type: ignore[arg-type]
    run_id = next(c.run_id for c in chunks if getattr(c, "run_id", None))
    steps = steps_of(client, run_id)
    assert len(steps) == 2 == len(mock_llm.requests)
    for step, sent in zip(steps, mock_llm.requests, strict=True):
        trace = client.steps.trace.retrieve(step.id)
        assert trace is not None and trace.request_json == sent
    assert "Ann" in json.dumps(mock_llm.requests[1])


def test_a_failed_blocking_call_keeps_its_request_and_the_error(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.error(400, times=10, message="model exploded"))
    response = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code >= 400
    [run] = client.runs.list(agent_id=agent.id)
    [step] = steps_of(client, run.id)
    assert step.status == "failed"
    trace = client.steps.trace.retrieve(step.id)
    assert trace is not None and trace.request_json == mock_llm.requests[-1]
    assert set(trace.response_json) == {"error", "error_type"}
    assert "model exploded" in trace.response_json["error"]


def test_a_blocking_send_with_logprobs_keeps_them_in_the_completion(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("three little words"))
    told = client.agents.messages.create(agent.id, input="hi", return_logprobs=True)  # type: ignore[call-arg]
    [step] = steps_of(client, told.messages[-1].run_id)
    trace = client.steps.trace.retrieve(step.id)
    assert trace is not None and trace.request_json["logprobs"] is True
    assert trace.response_json["choices"][0]["logprobs"] == mock_llm.sent_logprobs[-1]


def responses_agent(client: Letta, mock_llm: MockLLM) -> Any:
    """An agent on a model Letta calls through OpenAI's Responses API."""
    config = {
        "model": "gpt-5",
        "model_endpoint_type": "openai",
        "model_endpoint": mock_llm.base_url,
        "provider_name": "openai",
        "context_window": 64000,
    }
    return client.agents.create(llm_config=config, embedding=EMBEDDING)  # type: ignore[arg-type]


def test_a_responses_api_step_keeps_the_body_and_the_response_object(client: Letta, mock_llm: MockLLM) -> None:
    agent = responses_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.").reporting(1234), Reply.text("Again.").reporting(99))
    blocking = client.agents.messages.create(agent.id, input="hi")
    [step] = steps_of(client, blocking.messages[-1].run_id)
    trace = client.steps.trace.retrieve(step.id)
    assert trace is not None
    sent = {k: v for k, v in mock_llm.requests[0].items() if k != "_api"}
    assert mock_llm.requests[0]["_api"] == "responses" and trace.request_json == sent
    answer = trace.response_json  # the provider's own `response` object, as Letta keeps it
    assert answer["object"] == "response" and answer["usage"]["input_tokens"] == 1234
    texts = [p["text"] for item in answer["output"] if item["type"] == "message" for p in item["content"]]
    assert texts == ["Hello Bob."]

    chunks = list(client.agents.messages.stream(agent_id=agent.id, input="again", stream_tokens=True))
    run_id = next(c.run_id for c in chunks if getattr(c, "run_id", None))
    [streamed] = steps_of(client, run_id)
    summary = client.steps.trace.retrieve(streamed.id)
    assert summary is not None
    assert summary.request_json == {k: v for k, v in mock_llm.requests[1].items() if k != "_api"}
    assert summary.response_json["usage"]["input_tokens"] == 99
    assert [json.loads(p)["text"] for p in summary.response_json["content"]["content"]] == ["Again."]
