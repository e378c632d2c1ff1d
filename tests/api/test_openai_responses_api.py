"""OpenAI's Responses API for letta_v1 agents on OpenAI's reasoning models, as Letta 0.16.8 calls it: the request
(`store: false`, the encrypted reasoning asked for, a detailed reasoning summary, Responses-shaped input and tools),
the reasoning summary shown as a `reasoning_message` (blocking, streamed, listed), and the encrypted reasoning
sent back with the tool call and its output on the next step. Other agent types and models keep chat
completions. Through letta-client against the live server; the mock records what the model was sent.
"""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}]
REASONING = "Thinking about Bob.\n\nDeciding to greet him."
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, mock_llm: MockLLM, model: str = "gpt-5", agent_type: str = "letta_v1_agent") -> Any:
    config = {
        "model": model,
        "model_endpoint_type": "openai",
        "model_endpoint": mock_llm.base_url,
        "provider_name": "openai",
        "context_window": 64000,
        "reasoning_effort": "medium",
    }
    return client.agents.create(
        llm_config=config,  # type: ignore[arg-type]
        embedding=EMBEDDING,
        memory_blocks=BLOCKS,  # type: ignore[list-item]
        agent_type=agent_type,  # type: ignore[arg-type]
    )


def of_type(messages: Any, message_type: str) -> list[Any]:
    return [m for m in messages if m.message_type == message_type]


def test_the_request_is_letta_s_responses_body(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.", reasoning=REASONING))
    client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    [sent] = mock_llm.requests
    assert sent["_api"] == "responses" and "messages" not in sent
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert sent["stream"] is True and sent["model"] == "gpt-5"
    assert sent["reasoning"] == {"effort": "medium", "summary": "detailed"}
    assert sent["temperature"] is None and sent["parallel_tool_calls"] is False
    assert sent["tool_choice"] == "auto" and sent["prompt_cache_retention"] == "24h"
    assert sent["user"].startswith("user-")
    first, last = sent["input"][0], sent["input"][-1]
    assert first["role"] == "developer" and "I am Sam." in first["content"]
    assert last["role"] == "user" and last["content"][0]["type"] == "input_text"
    assert "hi" in last["content"][0]["text"]
    tool = next(t for t in sent["tools"] if t["name"] == "conversation_search")
    assert tool["type"] == "function" and "function" not in tool and tool["strict"] is False
    assert "request_heartbeat" not in tool["parameters"]["properties"]


def test_the_reasoning_summary_shows_as_a_reasoning_message(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.", reasoning=REASONING, signature="enc-greeting"))
    response = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    shown = [m for m in response.messages if m.message_type in ("reasoning_message", "assistant_message")]
    assert [m.message_type for m in shown] == ["reasoning_message", "assistant_message"]
    reasoning, assistant = shown
    assert reasoning.reasoning == REASONING and reasoning.source == "reasoner_model"  # type: ignore[union-attr]
    assert reasoning.signature == "enc-greeting"  # type: ignore[union-attr]
    assert assistant.content == "Hello Bob."  # type: ignore[union-attr]
    assert reasoning.id == assistant.id and reasoning.otid != assistant.otid

    listed = client.agents.messages.list(agent.id).items
    [stored] = [m for m in listed if m.message_type == "reasoning_message" and m.id == reasoning.id]
    assert stored.reasoning == REASONING and stored.otid == reasoning.otid  # type: ignore[union-attr]


def test_streamed_tokens_show_the_summary_as_it_comes(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello there Bob.", reasoning=REASONING, signature="enc-streamed"))
    chunks = list(client.agents.messages.stream(agent.id, messages=HI, stream_tokens=True))  # type: ignore[arg-type]
    assert mock_llm.requests[0]["_api"] == "responses"
    reasoning, assistant = of_type(chunks, "reasoning_message"), of_type(chunks, "assistant_message")
    assert len(reasoning) > 1 and len(assistant) > 1
    assert "".join(c.reasoning for c in reasoning) == REASONING
    assert "".join(c.content for c in assistant) == "Hello there Bob."
    assert {c.source for c in reasoning} == {"reasoner_model"}
    # Every fragment names the stored message and its part, as the listing shows them.
    listed = client.agents.messages.list(agent.id).items
    [stored] = [m for m in listed if m.message_type == "reasoning_message" and m.id == reasoning[0].id]
    assert {(c.id, c.otid) for c in reasoning} == {(stored.id, stored.otid)}
    assert stored.signature == "enc-streamed"  # type: ignore[union-attr]
    [text] = [m for m in listed if m.message_type == "assistant_message" and m.id == stored.id]
    assert {(c.id, c.otid) for c in assistant} == {(text.id, text.otid)}


def test_a_step_stream_shows_the_whole_summary(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.", reasoning=REASONING, signature="enc-step"))
    chunks = list(client.agents.messages.stream(agent.id, messages=HI))  # type: ignore[arg-type]
    assert mock_llm.requests[0]["_api"] == "responses"
    [reasoning] = of_type(chunks, "reasoning_message")
    assert reasoning.reasoning == REASONING and reasoning.source == "reasoner_model"
    assert reasoning.signature == "enc-step"


def test_a_tool_step_sends_back_its_encrypted_reasoning_call_and_output(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(
        Reply.tool_call(
            "conversation_search", {"query": "tea"}, "call_tea", reasoning="Search for tea.", signature="enc-A"
        ),
        Reply.text("No tea yet.", reasoning="Nothing found.", signature="enc-B"),
    )
    response = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    types = [m.message_type for m in response.messages]
    assert types == [
        "reasoning_message",
        "tool_call_message",
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
    ]
    first, second = mock_llm.requests
    assert all(r["_api"] == "responses" for r in (first, second))
    sent_back = second["input"][len(first["input"]) :]
    reasoning, call, output = sent_back
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"] == "enc-A"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Search for tea."}]
    assert reasoning["id"].startswith("rs_mock_")
    assert call == {
        "type": "function_call",
        "call_id": "call_tea",
        "name": "conversation_search",
        "arguments": json.dumps({"query": "tea"}),
        "status": "completed",
    }
    assert output["type"] == "function_call_output" and output["call_id"] == "call_tea"
    assert json.loads(output["output"])["status"] == "OK"

    # The next turn sends every stored reasoning item back, each before its message.
    mock_llm.script(Reply.text("Bye."))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "bye"}])  # type: ignore[list-item]
    items = mock_llm.requests[-1]["input"]
    reasoning_items = [i for i in items if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in reasoning_items] == ["enc-A", "enc-B"]
    after_b = items[items.index(reasoning_items[1]) + 1]
    assert after_b == {"role": "assistant", "content": "No tea yet."}


def test_usage_reads_the_responses_usage(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.", reasoning="Short thought.").reporting(1234))
    response = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    # The mock counts ~4 characters a token: "Hello Bob." 3, "Short thought." 4 (reasoning tokens).
    assert response.usage.prompt_tokens == 1234
    assert response.usage.completion_tokens == 7
    assert response.usage.total_tokens == 1241


def test_the_raw_payload_preview_shows_the_responses_body(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    preview = http.post(f"/v1/agents/{agent.id}/messages/preview-raw-payload", json={"messages": HI})
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert "input" in body and "messages" not in body and body["store"] is False


@pytest.mark.parametrize(("model", "agent_type"), [("gpt-5", "memgpt_v2_agent"), ("gpt-4o", "letta_v1_agent")])
def test_other_agents_and_models_keep_chat_completions(
    client: Letta, mock_llm: MockLLM, model: str, agent_type: str
) -> None:
    agent = make_agent(client, mock_llm, model, agent_type)
    if agent_type == "memgpt_v2_agent":
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hello.", "thinking": "hm"}))
    client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    sent = mock_llm.requests[0]
    assert "_api" not in sent and "messages" in sent and "input" not in sent


def test_a_failed_response_is_an_llm_error(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    failed = {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}}
    mock_llm.script(Reply.raw(f"event: response.failed\ndata: {json.dumps(failed)}\n\n"))
    answer = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": HI})
    assert answer.status_code == 500, answer.text
    assert answer.json()["error"]["type"] == "llm_error"


def test_an_approved_call_goes_back_with_its_reasoning(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    client.agents.tools.update_approval("memory_insert", agent_id=agent.id, body_requires_approval=True)
    edit = {"label": "human", "new_string": "Bob likes tea."}
    mock_llm.script(Reply.tool_call("memory_insert", edit, "call_edit", reasoning="Save it.", signature="enc-gated"))
    asked = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    assert [m.message_type for m in asked.messages] == ["reasoning_message", "approval_request_message"]
    assert asked.messages[0].signature == "enc-gated"  # type: ignore[union-attr]

    mock_llm.script(Reply.text("Saved."))
    approval = {"type": "approval", "approvals": [{"type": "approval", "tool_call_id": "call_edit", "approve": True}]}
    client.agents.messages.create(agent.id, messages=[approval])  # type: ignore[list-item]
    items = mock_llm.requests[-1]["input"]
    kinds = [i.get("type") for i in items[-3:]]
    assert kinds == ["reasoning", "function_call", "function_call_output"]
    assert items[-3]["encrypted_content"] == "enc-gated" and items[-2]["call_id"] == "call_edit"


def test_a_refused_key_is_llm_authentication(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.error(401, message="Incorrect API key provided", times=5))
    answer = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": HI})
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["type"] == "llm_authentication"
    assert [r["_api"] for r in mock_llm.requests] == ["responses"]


def test_generate_goes_through_the_responses_api(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Paris", reasoning="Easy.").reporting(40))
    prompt = {"prompt": "Capital of France?", "system_prompt": "One word."}
    answer = http.post(f"/v1/agents/{agent.id}/generate", json=prompt)
    assert answer.status_code == 200, answer.text
    assert (
        answer.json()["content"] == "Paris" and answer.json()["usage"]["total_tokens"] == 40 + 4
    )  # "Paris", "Easy.": 2 + 2
    [sent] = mock_llm.requests
    assert sent["_api"] == "responses" and "stream" not in sent
    assert sent["input"] == [
        {"role": "developer", "content": "One word."},
        {"role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]},
    ]
    assert sent["reasoning"] == {"effort": "medium", "summary": "detailed"}
    assert sent["tools"] is None and sent["tool_choice"] is None

    # A schema's request is built as another agent type's (Letta's split_thread_agent): chat completions.
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    mock_llm.script(Reply.tool_call("structured_output", {"city": "Paris"}))
    shaped = http.post(f"/v1/agents/{agent.id}/generate", json={**prompt, "response_schema": schema})
    assert shaped.status_code == 200, shaped.text
    assert "_api" not in mock_llm.requests[-1] and "messages" in mock_llm.requests[-1]


def test_another_model_later_is_sent_no_reasoning_items(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello Bob.", reasoning=REASONING))
    client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    config = client.agents.retrieve(agent.id).llm_config.model_dump(exclude_none=True)
    client.agents.update(agent.id, llm_config={**config, "model": "gpt-4o"})  # type: ignore[arg-type]
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "again"}])  # type: ignore[list-item]
    sent = mock_llm.requests[-1]
    assert "_api" not in sent and {"role": "assistant", "content": "Hello Bob."} in sent["messages"]
    assert "responses_reasoning" not in json.dumps(sent)


def test_a_response_cut_at_max_output_tokens_stops_the_turn(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm)
    mock_llm.script(Reply.text("Hello B", reasoning="Greet.", finish_reason="length"))
    response = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    assert mock_llm.requests[0]["_api"] == "responses"  # answered with response.incomplete (max_output_tokens)
    assert response.stop_reason.stop_reason == "max_tokens_exceeded"
    assert [m.message_type for m in response.messages] == ["reasoning_message", "assistant_message"]
