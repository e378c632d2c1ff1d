"""Per-model request rules (`memlet.llm.model_quirks`), Anthropic's share of them, and prefilled-argument checks."""

import pytest

from memlet.llm import model_quirks as quirks
from memlet.llm.anthropic_format import STRUCTURED_OUTPUTS_BETA, AnthropicOptions, request_body
from memlet.llm.types import ChatRequest
from memlet.loop.chat_request import tool_return_limit
from memlet.tools.prefill import PrefillError, merge_prefilled

SCHEMA = {
    "name": "lookup",
    "description": "Look up.",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["word"],
    },
}


def test_strict_schema_requires_everything_and_keeps_optional_nullable() -> None:
    strict = quirks.strict_schema(SCHEMA)
    params = strict["parameters"]
    assert strict["strict"] is True and params["additionalProperties"] is False
    assert params["required"] == ["word", "limit"]
    assert params["properties"]["limit"]["type"] == ["integer", "null"]
    assert params["properties"]["word"]["type"] == "string"
    assert "strict" not in SCHEMA  # the stored schema is untouched


@pytest.mark.parametrize(
    ("model", "developer", "parallel"),
    [("gpt-5-mini", True, False), ("o1-mini", False, False), ("o3", True, False), ("gpt-4o-mini", False, True)],
)
def test_reasoning_models(model: str, developer: bool, parallel: bool) -> None:
    assert quirks.accepts_developer_role(model) is developer
    assert quirks.supports_parallel_tool_calls(model) is parallel


def test_auto_tool_choice_servers() -> None:
    assert quirks.requires_auto_tool_choice({"handle": "vllm/qwen"})
    assert quirks.requires_auto_tool_choice({"model_endpoint": "https://api.studio.nebius.com/v1"})
    assert not quirks.requires_auto_tool_choice({"handle": "openai/gpt-4o-mini", "model_endpoint_type": "openai"})


def test_tool_return_limit_is_a_fifth_of_the_window_in_characters() -> None:
    assert tool_return_limit({"context_window": 8000}) == 6400
    assert tool_return_limit({"context_window": 2000}) == 5000


class TestAnthropic:
    def chat(self, **fields: object) -> ChatRequest:
        tool = {"type": "function", "function": quirks.strict_schema(SCHEMA)}
        return ChatRequest(
            model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hi"}], tools=[tool], **fields
        )  # type: ignore[arg-type]

    def test_parallel_use_follows_the_request(self) -> None:
        on = request_body(self.chat(tool_choice="auto", parallel_tool_calls=True), AnthropicOptions())
        off = request_body(self.chat(tool_choice="auto", parallel_tool_calls=False), AnthropicOptions())
        assert on["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": False}
        assert off["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}

    def test_strict_tools_and_beta(self) -> None:
        body = request_body(self.chat(tool_choice="auto"), AnthropicOptions())
        assert body["tools"][0]["strict"] is True
        config = {"model": "claude-sonnet-4-5", "model_endpoint_type": "anthropic", "strict": True}
        assert STRUCTURED_OUTPUTS_BETA in AnthropicOptions.from_llm_config(config).betas
        older = {**config, "model": "claude-3-5-haiku"}
        assert STRUCTURED_OUTPUTS_BETA not in AnthropicOptions.from_llm_config(older).betas


class TestPrefill:
    def test_values_override_the_model(self) -> None:
        assert merge_prefilled("lookup", SCHEMA, {"word": "a", "limit": 1}, {"limit": 5}) == {"word": "a", "limit": 5}

    def test_unknown_and_mistyped_are_refused(self) -> None:
        with pytest.raises(PrefillError) as caught:
            merge_prefilled("lookup", SCHEMA, {}, {"limit": True, "colour": "red"})
        assert "'limit' = True" in str(caught.value) and "'colour'" in str(caught.value)


def test_empty_text_filler_covers_every_role_and_text_parts() -> None:
    messages = [
        {"role": "system", "content": ""},
        {"role": "user", "content": [{"type": "text", "text": " "}, {"type": "image_url", "image_url": {"url": "u"}}]},
        {"role": "assistant", "content": "\n", "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c", "content": ""},
        {"role": "assistant", "content": "kept"},
    ]
    filled = quirks.with_empty_text_filled({"model_endpoint_type": "zai"}, messages)
    assert filled is not None
    assert [m["content"] for m in filled] == [
        ".",
        [{"type": "text", "text": "."}, {"type": "image_url", "image_url": {"url": "u"}}],
        None,
        ".",
        "kept",
    ]
    assert messages[0]["content"] == ""  # the buffer's own messages are untouched
    assert quirks.with_empty_text_filled({"model_endpoint_type": "openai"}, messages) is None
    assert quirks.with_empty_text_filled({"model_endpoint_type": "zai"}, messages[4:]) is None
