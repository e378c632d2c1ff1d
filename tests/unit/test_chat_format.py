"""Stored rows as OpenAI chat messages: the one-text-part fast paths give what the general paths give."""

from memlet.db import models as orm
from memlet.llm.anthropic_format import THINKING_BLOCKS_KEY
from memlet.llm.chat_format import text_parts, to_openai_messages, user_content
from memlet.llm.tool_definitions import tool_definition

SCHEMA = {
    "name": "lookup",
    "description": "Look something up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def test_text_parts_of_one_several_and_no_parts() -> None:
    assert text_parts([text("only")]) == "only"
    assert text_parts([{"type": "reasoning", "reasoning": "hidden"}]) == ""
    assert text_parts([text("a"), {"type": "reasoning", "reasoning": "x"}, text("b")]) == "ab"
    assert text_parts(None) == text_parts([]) == ""


def test_user_content_is_text_unless_it_carries_images() -> None:
    assert user_content([text("hi")]) == "hi"
    assert user_content([text("a"), text("b")]) == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    image = {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
    assert user_content([text("look"), image]) == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "auto"}},
    ]


def test_rows_become_messages() -> None:
    signed = {"type": "reasoning", "reasoning": "pondering", "signature": "sig-1"}
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"query": "tea"}'}}
    rows = [
        orm.Message(role="user", content=[text("hello")]),
        orm.Message(role="assistant", content=[signed, text("let me look")], tool_calls=[call]),
        orm.Message(
            role="tool",
            content=[text("first"), text("second")],
            tool_call_id="call_1",
            tool_returns=[{"tool_call_id": "call_1"}, {"tool_call_id": "call_2"}],
        ),
        orm.Message(role="tool", content=[text("x" * 20)], tool_call_id="call_3", tool_returns=[{}]),
        orm.Message(role="assistant", content=[text("done")]),
        orm.Message(role="summary", content=[text("earlier: tea")]),
    ]
    messages = to_openai_messages("sys", rows, "letta_v1_agent", tool_return_limit=5)
    assert messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hello"},
        {
            "role": "assistant",
            "content": "let me look",
            "tool_calls": [call],
            THINKING_BLOCKS_KEY: [{"type": "thinking", "thinking": "pondering", "signature": "sig-1"}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "first"},
        {"role": "tool", "tool_call_id": "call_2", "content": "secon... [truncated 1 chars]"},
        {"role": "tool", "tool_call_id": "call_3", "content": "xxxxx... [truncated 15 chars]"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "earlier: tea"},
    ]


def test_tool_definition_is_a_copy() -> None:
    definition = tool_definition(SCHEMA, v2=False, terminal=False)
    assert definition == {"type": "function", "function": SCHEMA}
    definition["function"]["parameters"]["properties"]["query"]["type"] = "integer"
    assert SCHEMA["parameters"]["properties"]["query"]["type"] == "string"  # type: ignore[index]
