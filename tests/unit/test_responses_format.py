"""The Responses API body built from a chat request and the reading of its answers (`memlet.llm.responses_format`,
`memlet.llm.responses_stream`), in the cases the API tests do not reach: tool_choice, text.format, the -fast tier,
images, tool results in parts, and the stream's edge events."""

from typing import Any

import pytest

from memlet.errors import LLMError
from memlet.llm.responses_format import responses_body, uses_responses_api
from memlet.llm.responses_stream import ResponsesAssembler, result_from_response
from memlet.llm.types import (
    REASONING_ITEMS_KEY,
    TOOL_RESULT_PARTS_KEY,
    ChatRequest,
    ContentDelta,
    ReasoningDelta,
    ToolCallDelta,
)

TOOL = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}


def request(**fields: Any) -> ChatRequest:
    base: dict[str, Any] = {"model": "gpt-5", "messages": [{"role": "system", "content": "S"}]}
    return ChatRequest(**(base | {"agent_type": "letta_v1_agent"} | fields))


def test_only_letta_v1_agents_on_reasoning_models_use_it() -> None:
    assert uses_responses_api(request())
    assert uses_responses_api(request(model="o4-mini"))
    assert not uses_responses_api(request(model="gpt-4o"))
    assert not uses_responses_api(request(agent_type="memgpt_v2_agent"))
    assert not uses_responses_api(request(agent_type=None))


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("required", "required"),
        ("auto", "auto"),
        ({"type": "function", "function": {"name": "f"}}, {"type": "function", "name": "f"}),
    ],
)
def test_tool_choice_in_the_responses_form(choice: Any, expected: Any) -> None:
    body = responses_body(request(tools=[TOOL], tool_choice=choice), "openai")
    assert body["tool_choice"] == expected
    assert body["tools"] == [
        {"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}, "strict": False}
    ]


def test_no_tools_names_them_null() -> None:
    body = responses_body(request(), "openai")
    assert body["tools"] is None and body["tool_choice"] is None and body["temperature"] is None
    assert "reasoning" not in body and "text" not in body and "max_output_tokens" not in body


def test_text_format_verbosity_limit_and_priority_tier() -> None:
    schema = {"name": "answer", "schema": {"type": "object"}}
    body = responses_body(
        request(
            model="gpt-5.4-fast",
            response_format={"type": "json_schema", "json_schema": schema},
            verbosity="low",
            max_tokens=500,
            user="user-1",
        ),
        "openai",
    )
    assert body["text"] == {
        "verbosity": "low",
        "format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True},
    }
    assert (body["model"], body["service_tier"]) == ("gpt-5.4", "priority")
    assert body["max_output_tokens"] == 500 and body["user"] == "user-1"
    # Letta sends no format for json_object (the Responses API does not take it so).
    assert "text" not in responses_body(request(response_format={"type": "json_object"}), "openai")


def test_input_items() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA", "detail": "low"}}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    parts = [{"type": "text", "text": "seen"}, {"type": "image", "source": {"data": "BBB", "media_type": "image/jpeg"}}]
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, image], "name": "bob"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [call], REASONING_ITEMS_KEY: [reasoning]},
        {"role": "tool", "tool_call_id": "call_1", "content": "seen [Image omitted]", TOOL_RESULT_PARTS_KEY: parts},
    ]
    assert responses_body(request(messages=messages), "openai")["input"] == [
        {"role": "developer", "content": "S"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAA", "detail": "low"},
            ],
        },
        reasoning,
        {"role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}", "status": "completed"},
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "seen"},
                {"type": "input_image", "image_url": "data:image/jpeg;base64,BBB", "detail": "auto"},
            ],
        },
    ]


def feed(assembler: ResponsesAssembler, *events: dict[str, Any]) -> list[Any]:
    return [out for event in events for out in assembler.feed(event)]


def test_the_stream_reads_as_letta_reads_it() -> None:
    assembler = ResponsesAssembler()
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
    part = {"type": "summary_text", "text": ""}
    events = feed(
        assembler,
        {"type": "response.created", "response": {}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "summary": []}},
        {"type": "response.reasoning_summary_part.added", "summary_index": 0, "part": part},
        {"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": "One."},
        {"type": "response.reasoning_summary_part.added", "summary_index": 1, "part": part},
        {"type": "response.reasoning_summary_text.delta", "summary_index": 1, "delta": "Two."},
        {"type": "response.output_text.delta", "delta": "Hi"},
        {"type": "response.output_item.added", "output_index": 2, "item": call},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": '{"a"'},
        {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": ":1}"},
    )
    assert events == [
        ReasoningDelta("One."),
        ReasoningDelta("\n\n"),
        ReasoningDelta("Two."),
        ContentDelta("Hi"),
        ToolCallDelta(0, "call_1", "f", ""),
        ToolCallDelta(0, "call_1", None, '{"a"'),
        ToolCallDelta(0, "call_1", None, ":1}"),
    ]
    # Without the final response (a stream cut short): what was streamed.
    result = assembler.result()
    assert (result.content, result.reasoning) == ("Hi", "One.\n\nTwo.")
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("call_1", "f", '{"a":1}')]


def test_an_incomplete_response_ends_with_length() -> None:
    response = {
        "object": "response",
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"text": "A"}, {"text": ""}], "encrypted_content": "e"},
            {"type": "message", "content": [{"type": "output_text", "text": "cut"}]},
        ],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 3},
        },
    }
    result = result_from_response(response)
    assert (result.finish_reason, result.content, result.reasoning) == ("length", "cut", "A")
    assert [(r.id, r.summary, r.encrypted_content) for r in result.summarized] == [("rs_1", ("A", ""), "e")]
    usage = result.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (10, 5, 15)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (4, 3)


@pytest.mark.parametrize(
    "event",
    [
        {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}},
        {"type": "error", "code": "server_error", "message": "boom"},
    ],
)
def test_failures_are_llm_errors(event: dict[str, Any]) -> None:
    with pytest.raises(LLMError) as raised:
        ResponsesAssembler().feed(event)
    assert raised.value.error_type == "llm_error" and "boom" in str(raised.value.detail)
