"""``POST /v1/chat/completions`` (issue #12 item 4) through the official ``openai`` client against the live server."""

import json
from typing import Any

import httpx
import openai
import pytest
from letta_client import Letta
from openai import OpenAI

from tests.mock_llm import MockLLM, Reply, usage_for

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta) -> Any:
    blocks = [{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}]
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=blocks)  # type: ignore[arg-type]


def openai_client(server: Any) -> OpenAI:
    return OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0)


def chunks_of(server: Any, agent_id: str, messages: list[dict[str, Any]]) -> list[Any]:
    stream = openai_client(server).chat.completions.create(model=agent_id, messages=messages, stream=True)  # type: ignore[arg-type]
    return list(stream)


def text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_streamed_reply_arrives_as_chat_completion_chunks(client: Letta, server: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    reply = "Hello Bob, the weather is lovely today and the tea is warm."
    mock_llm.script(Reply.text(reply))
    chunks = chunks_of(server, agent.id, [{"role": "user", "content": "hi"}])
    assert len(chunks) >= 3
    assert text_of(chunks) == reply
    assert chunks[0].choices[0].delta.role == "assistant"
    last = chunks[-1].choices[0]
    assert last.finish_reason == "stop" and last.delta.content is None
    assert all(c.id == chunks[0].id for c in chunks) and chunks[0].id.startswith("chatcmpl-run-")
    assert {c.model for c in chunks} == {"gpt-4o-mini"}
    assert sum(1 for c in chunks if c.choices[0].delta.content) >= 2  # token streaming, not one block


def test_tool_calls_are_hidden_but_text_after_them_is_streamed(client: Letta, server: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("Found nothing about tea."))
    chunks = chunks_of(server, agent.id, [{"role": "user", "content": "tea?"}])
    assert text_of(chunks) == "Found nothing about tea."
    assert all(not c.choices[0].delta.tool_calls for c in chunks)
    assert len(mock_llm.requests) == 2  # the tool really ran and the model was asked again
    # One stop chunk for the whole turn, last, as Letta's own chat-completions test requires (not one per step).
    assert [c.choices[0].finish_reason for c in chunks].count("stop") == 1 and chunks[-1].choices[0].finish_reason


def test_only_the_last_user_message_is_sent(client: Letta, server: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    messages = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "an old answer"},
        {"role": "user", "content": [{"type": "text", "text": "the newest question"}]},
    ]
    chunks_of(server, agent.id, messages)
    history = client.agents.messages.list(agent.id, limit=100).items
    users = [m for m in history if m.message_type == "user_message"]
    texts = json.dumps([m.content for m in users], default=str)
    assert "the newest question" in texts and "first question" not in texts


def test_letta_400s(client: Letta, server: Any, http: httpx.Client) -> None:
    agent = make_agent(client)
    api = openai_client(server)
    with pytest.raises(openai.BadRequestError):
        api.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True)
    response = http.post("/v1/chat/completions", json={"model": "gpt-4o", "stream": True, "messages": []})
    assert response.status_code == 400
    assert "'model' field should contain an agent ID (format: 'agent-...'). Received: 'gpt-4o'" in response.text
    response = http.post(
        "/v1/chat/completions",
        json={"model": agent.id, "stream": True, "messages": [{"role": "system", "content": "x"}]},
    )
    assert response.status_code == 400 and "No user message found" in response.json()["detail"]


def test_llm_failure_ends_with_an_error_chunk_not_stop(
    client: Letta, server: Any, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.error(400, times=10, message="model exploded"))
    with pytest.raises(openai.APIError) as failed:
        chunks_of(server, agent.id, [{"role": "user", "content": "hi"}])
    assert failed.value.body is not None and failed.value.body["type"] == "llm_bad_request"
    assert "model exploded" in failed.value.body["detail"]

    mock_llm.reset()
    mock_llm.script(Reply.error(400, times=10, message="model exploded again"))
    body = {"model": agent.id, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with http.stream("POST", "/v1/chat/completions", json=body) as response:
        lines = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    events = [json.loads(line) for line in lines[:-1]]
    error = events[-1]["error"]
    assert error["type"] == "llm_bad_request" and error["message"] and "model exploded again" in error["detail"]
    assert all(c["finish_reason"] != "stop" for e in events for c in e.get("choices", []))

    mock_llm.reset()
    mock_llm.script(Reply.text("I am fine again."))
    assert text_of(chunks_of(server, agent.id, [{"role": "user", "content": "still there?"}])) == "I am fine again."


def test_include_usage_adds_a_final_usage_chunk(client: Letta, server: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    reply = Reply.text("Counting my tokens carefully.").reporting(1234)
    mock_llm.script(reply)
    stream = openai_client(server).chat.completions.create(
        model=agent.id,
        messages=[{"role": "user", "content": "count"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None and last.id == chunks[0].id
    expected = usage_for(mock_llm.requests[-1], reply)
    assert last.usage.prompt_tokens == 1234 == expected["prompt_tokens"]
    assert last.usage.completion_tokens == expected["completion_tokens"] > 0
    assert last.usage.total_tokens == expected["total_tokens"]
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks[:-1])
    assert text_of(chunks) == "Counting my tokens carefully."
    plain = chunks_of(server, agent.id, [{"role": "user", "content": "again"}])
    assert all(c.usage is None and c.choices for c in plain)  # no usage chunk unless asked


@pytest.mark.parametrize(
    ("field", "value"),
    [("temperature", 2.5), ("top_p", 1.5), ("n", 0), ("presence_penalty", -3), ("frequency_penalty", 2.1)],
)
def test_sampling_fields_past_openais_bounds_are_422(
    client: Letta, server: Any, http: httpx.Client, field: str, value: float
) -> None:
    agent = make_agent(client)
    body = {"model": agent.id, "stream": True, "messages": [{"role": "user", "content": "x"}], field: value}
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 422, response.text
    assert field in response.text
