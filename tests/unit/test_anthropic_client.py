"""AnthropicClient against the mock's `/v1/messages` (blocking and SSE), and the request conversion both ways."""

import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from memlet.config import Settings
from memlet.errors import LLMError
from memlet.llm.anthropic_client import AnthropicClient
from memlet.llm.anthropic_format import AnthropicOptions, request_body
from memlet.llm.client import (
    ChatRequest,
    ChatResult,
    ContentDelta,
    ContextWindowExceededError,
    OpenAICompatibleClient,
    ReasoningDelta,
    RetryPolicy,
    ToolCallDelta,
    client_for,
)
from memlet.providers.endpoints import endpoint_url, key_for
from memlet.providers.env_providers import env_keys
from tests.mock_llm import MockLLM, Reply

FAST_RETRY = RetryPolicy(max_retries=2, base_delay_s=0.01)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a word up.",
            "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
        },
    },
    {"type": "function", "function": {"name": "noop", "description": "", "parameters": {"type": "object"}}},
]
THOUGHT = {"type": "thinking", "thinking": "I should look it up.", "signature": "sig-1"}
HISTORY = [
    {"role": "system", "content": "You are a test agent."},
    {"role": "user", "content": "define cat"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "lookup", "arguments": '{"word":"cat"}'}}
        ],
        "thinking_blocks": [THOUGHT, {"type": "redacted_thinking", "data": "opaque"}],
        "thinking_model": "claude-sonnet-4-5",  # the model the requests below go to
    },
    {"role": "tool", "tool_call_id": "toolu_1", "content": "a small feline"},
    {"role": "system", "content": "Memory was updated."},
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLM]:
    mock = MockLLM.start()
    yield mock
    mock.stop()


@pytest.fixture
def mock(server: MockLLM) -> MockLLM:
    server.reset()
    return server


def chat(stream: bool = False, tools: list[dict[str, object]] | None = None, **fields: object) -> ChatRequest:
    messages = [{"role": "system", "content": "You are a test agent."}, {"role": "user", "content": "hi"}]
    return ChatRequest(model="claude-sonnet-4-5", messages=messages, tools=tools, stream=stream, **fields)  # type: ignore[arg-type]


def client(mock: MockLLM, options: AnthropicOptions = AnthropicOptions()) -> AnthropicClient:
    llm = client_for("anthropic", mock.base_url, "sk-ant-test", 5, retry_base_delay_s=0.01)
    assert isinstance(llm, AnthropicClient)
    return llm.bind(options)


class TestConversion:
    def test_history_becomes_anthropic_blocks(self) -> None:
        body = request_body(ChatRequest(model="claude-sonnet-4-5", messages=HISTORY), AnthropicOptions())
        assert body["system"] == [
            {"type": "text", "text": "You are a test agent.", "cache_control": {"type": "ephemeral"}}
        ]
        user, assistant, tool_user = body["messages"]
        assert user == {"role": "user", "content": [{"type": "text", "text": "define cat"}]}
        # Signed thinking goes back first and verbatim, then the tool_use with parsed input.
        assert assistant["content"] == [
            THOUGHT,
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"word": "cat"}},
        ]
        # The tool result and the later system message (an event) share one user turn, whose last block marks
        # the end of the conversation to cache.
        event = "<event>SYSTEM ALERT: Memory was updated.</event>"
        assert tool_user["content"] == [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a small feline"},
            {"type": "text", "text": event, "cache_control": {"type": "ephemeral"}},
        ]

    def test_tools_cached_and_choice_mapped(self) -> None:
        forced = {"type": "function", "function": {"name": "lookup"}}
        body = request_body(chat(tools=TOOLS, tool_choice=forced, parallel_tool_calls=False), AnthropicOptions())
        assert body["tools"][0] == {
            "name": "lookup",
            "description": "Look a word up.",
            "input_schema": TOOLS[0]["function"]["parameters"],  # type: ignore[index]
        }
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tool_choice"] == {"type": "tool", "name": "lookup", "disable_parallel_tool_use": True}
        assert (
            request_body(chat(tools=TOOLS, tool_choice="required"), AnthropicOptions())["tool_choice"]["type"] == "any"
        )

    def test_thinking_from_llm_config(self) -> None:
        config = {"model": "claude-sonnet-4-5", "enable_reasoner": True, "max_reasoning_tokens": 2048}
        options = AnthropicOptions.from_llm_config(config)
        body = request_body(chat(tools=TOOLS, tool_choice="required", temperature=0.3, max_tokens=1000), options)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] > 2048  # the budget must stay below max_tokens
        assert body["tool_choice"]["type"] == "auto"  # Anthropic refuses forced tools with thinking
        assert body["temperature"] == 1.0  # the only value thinking takes, as Letta sends it
        off = AnthropicOptions.from_llm_config({**config, "enable_reasoner": False})
        assert "thinking" not in request_body(chat(temperature=0.3), off)

    def test_betas_effort_and_context_management(self) -> None:
        config = {"model": "claude-opus-4-5-20251101", "enable_reasoner": True, "effort": "high"}
        options = AnthropicOptions.from_llm_config(config)
        assert options.betas == (
            "interleaved-thinking-2025-05-14",
            "effort-2025-11-24",
            "context-management-2025-06-27",
        )
        body = request_body(chat(), options)
        assert body["output_config"] == {"effort": "high"}
        assert body["context_management"]["edits"][0]["keep"] == "all"
        adaptive = AnthropicOptions.from_llm_config({"model": "claude-sonnet-4-6", "enable_reasoner": True})
        assert adaptive.betas == ("adaptive-thinking-2026-01-28",)
        assert request_body(chat(), adaptive)["thinking"] == {"type": "adaptive"}
        plain = AnthropicOptions.from_llm_config({"model": "claude-3-5-haiku-20241022", "enable_reasoner": True})
        assert plain.betas == () and not plain.thinking

    def test_thinking_of_an_unknown_model_is_left_out(self) -> None:
        unknown = [{k: v for k, v in m.items() if k != "thinking_model"} for m in HISTORY]
        body = request_body(ChatRequest(model="claude-sonnet-4-5", messages=unknown), AnthropicOptions())
        sent = json.dumps(body["messages"])
        assert '"tool_use"' in sent and '"thinking"' not in sent and "redacted_thinking" not in sent

    def test_openai_client_drops_thinking_blocks(self) -> None:
        llm = OpenAICompatibleClient(base_url="http://127.0.0.1:1/v1")
        body = llm.request_body(ChatRequest(model="gpt-4o", messages=HISTORY))
        assert all("thinking_blocks" not in m for m in body["messages"])


class TestMessagesAPI:
    async def test_blocking_text_and_usage(self, mock: MockLLM) -> None:
        mock.script(Reply.text("Hello there."))
        llm = client(mock)
        result = await llm.chat(chat())
        assert result.content == "Hello there."
        assert result.finish_reason == "stop"
        sent = mock.requests[-1]
        assert sent["_api"] == "anthropic" and "stream" not in sent
        assert mock.authorizations[-1] == "sk-ant-test"
        # First sight of a cached system prompt: written to the cache, part of the prompt count.
        assert result.usage.cache_write_tokens > 0 and result.usage.cached_tokens is None  # none read: as unreported
        mock.script(Reply.text("Again."))
        again = await llm.chat(chat())
        assert again.usage.cached_tokens == result.usage.cache_write_tokens
        assert again.usage.prompt_tokens == result.usage.prompt_tokens
        assert again.usage.total_tokens == again.usage.prompt_tokens + again.usage.completion_tokens
        await llm.aclose()

    async def test_stream_thinking_text_and_tool_use(self, mock: MockLLM) -> None:
        mock.script(
            Reply.tool_call(
                "lookup", {"word": "cat"}, content="Checking.", reasoning="think about cats", signature="s9"
            )
        )
        llm = client(mock)
        events = [e async for e in llm.stream_chat(chat(stream=True, tools=TOOLS))]
        assert mock.requests[-1]["stream"] is True
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "think about cats"
        assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "Checking."
        assert len([e for e in events if isinstance(e, ContentDelta)]) == 1  # one word, one delta
        calls = [e for e in events if isinstance(e, ToolCallDelta)]
        assert calls[0].name == "lookup" and json.loads("".join(c.arguments for c in calls)) == {"word": "cat"}
        result = events[-1]
        assert isinstance(result, ChatResult)
        assert result.finish_reason == "tool_calls"
        assert result.tool_calls[0].id.startswith("toolu_mock_")
        assert [(b.text, b.signature) for b in result.thinking] == [("think about cats", "s9")]
        assert result.usage.completion_tokens > 0
        await llm.aclose()

    async def test_streamed_token_deltas(self, mock: MockLLM) -> None:
        mock.script(Reply.text("one two three four"))
        llm = client(mock)
        deltas = [e.text async for e in llm.stream_chat(chat(stream=True)) if isinstance(e, ContentDelta)]
        assert deltas == ["one", " two", " three", " four"]
        await llm.aclose()


class TestErrors:
    async def test_rate_limit_retried_then_mapped(self, mock: MockLLM) -> None:
        mock.script(Reply.error(429, times=3))
        llm = AnthropicClient(base_url=mock.base_url, retry=FAST_RETRY)
        with pytest.raises(LLMError) as info:
            await llm.chat(chat())
        assert info.value.error_type == "llm_rate_limit" and info.value.http_status == 429
        assert len(mock.requests) == 3
        await llm.aclose()

    async def test_overloaded_retried_and_recovers(self, mock: MockLLM) -> None:
        mock.script(Reply.error(529), Reply.text("fine"))
        llm = AnthropicClient(base_url=mock.base_url, retry=FAST_RETRY)
        assert (await llm.chat(chat())).content == "fine"
        mock.script(Reply.error(529, times=3))
        with pytest.raises(LLMError) as info:
            await llm.chat(chat())
        assert info.value.http_status == 503 and "overloaded" in str(info.value.detail).lower()
        await llm.aclose()

    async def test_prompt_too_long_is_context_overflow(self, mock: MockLLM) -> None:
        mock.script(Reply.error(400, message="prompt is too long: 210000 tokens > 200000 maximum"))
        llm = AnthropicClient(base_url=mock.base_url, retry=FAST_RETRY)
        with pytest.raises(ContextWindowExceededError):
            await llm.chat(chat(stream=True))
        await llm.aclose()

    async def test_error_event_mid_stream(self, mock: MockLLM) -> None:
        mock.script(Reply.text("a b c d", break_after=2))
        llm = AnthropicClient(base_url=mock.base_url, retry=FAST_RETRY)
        seen: list[str] = []

        async def consume() -> None:
            async for event in llm.stream_chat(chat(stream=True)):
                if isinstance(event, ContentDelta):
                    seen.append(event.text)

        with pytest.raises(LLMError) as info:
            await consume()
        assert seen == ["a", " b"]  # tokens already sent are not retried
        assert info.value.http_status == 503
        assert len(mock.requests) == 1
        await llm.aclose()


class TestKeys:
    def test_anthropic_key_follows_its_url_and_wins_a_shared_one(self) -> None:
        settings = Settings(_env_file=None, openai_api_key=SecretStr("sk-oa"), anthropic_api_key=SecretStr("sk-ant"))  # type: ignore[call-arg]
        keys = env_keys(settings)
        url = endpoint_url({"model_endpoint_type": "anthropic"}, settings)
        assert url == "https://api.anthropic.com/v1"
        assert key_for(url, keys, "anthropic") == "sk-ant"
        assert key_for("https://api.anthropic.com.evil.example/v1", keys, "anthropic") is None
        # One proxy serving both APIs: each endpoint type gets its own key.
        proxy = settings.model_copy(
            update={"openai_base_url": "http://proxy:4000/v1", "anthropic_base_url": "http://proxy:4000"}
        )
        shared = env_keys(proxy)
        assert key_for("http://proxy:4000/v1", shared, "anthropic") == "sk-ant"
        assert key_for("http://proxy:4000/v1", shared, "openai") == "sk-oa"
