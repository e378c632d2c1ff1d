"""OpenAICompatibleClient against the in-process mock LLM server (the embedding clients: test_embedding_clients.py)."""

import asyncio
import email.utils
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

import orjson
import pytest

from memlet.errors import BadRequestError, LLMError
from memlet.llm import openai_result
from memlet.llm.client import (
    ChatRequest,
    ChatResult,
    ContentDelta,
    ContextWindowExceededError,
    LLMEmptyResponseError,
    OpenAICompatibleClient,
    ReasoningDelta,
    RetryPolicy,
    ToolCallDelta,
    client_for,
    parse_retry_after,
    wire_tool_call_id,
)
from tests.mock_llm import Call, MockLLM, Reply, usage_for

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.01)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "send_message",
            "description": "Send a message to the user.",
            "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        },
    }
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


@pytest.fixture
async def client(mock: MockLLM) -> AsyncIterator[OpenAICompatibleClient]:
    llm = OpenAICompatibleClient(base_url=mock.base_url, timeout_s=5, retry=FAST_RETRY)
    yield llm
    await llm.aclose()


def request(**overrides: object) -> ChatRequest:
    fields: dict = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello there"}]}
    fields.update(overrides)
    return ChatRequest(**fields)


async def collect(llm: OpenAICompatibleClient, req: ChatRequest) -> list:
    return [event async for event in llm.stream_chat(req)]


class TestStreamChat:
    async def test_chat_builds_no_delta_events(
        self, mock: MockLLM, client: OpenAICompatibleClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        reply = Reply.tool_call("lookup", {"query": "tea"}, "call_1", content="Let me look.", reasoning="Hmm.")
        mock.script(reply, reply)
        streamed = (await collect(client, request(stream=True)))[-1]
        built: list[object] = []
        real = openai_result.ContentDelta  # accepts what the others are given: the recording only needs to run

        def recording(*args: object, **kwargs: object) -> object:
            built.append(args)
            return real(*args, **kwargs)  # type: ignore[arg-type]

        for event_type in ("ContentDelta", "ReasoningDelta", "ToolCallDelta"):
            monkeypatch.setattr(openai_result, event_type, recording)
        whole = await client.chat(request(stream=True))
        assert built == []  # a caller that wants the result only gets no per-chunk events built
        assert replace(whole, response_id=None) == replace(streamed, response_id=None)
        assert whole.reasoning == "Hmm." and whole.content == "Let me look."
        assert mock.requests[-1]["stream"] is True

    async def test_text_deltas_assemble_into_result(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.text("Hello there, how can I help you today?"))
        events = await collect(client, request())
        deltas = [e.text for e in events if isinstance(e, ContentDelta)]
        result = events[-1]
        assert isinstance(result, ChatResult)
        assert len(deltas) > 1
        assert "".join(deltas) == result.content == "Hello there, how can I help you today?"
        assert result.tool_calls == []
        assert result.finish_reason == "stop"
        sent = mock.requests[-1]
        reported = usage_for(sent, Reply.text("Hello there, how can I help you today?"))
        assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (
            reported["prompt_tokens"],
            reported["completion_tokens"],
        )
        assert result.usage.total_tokens == result.usage.prompt_tokens + result.usage.completion_tokens
        assert sent["stream"] is True
        assert sent["stream_options"] == {"include_usage": True}

    async def test_tool_calls_assemble_with_ids(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(
            Reply.tool_calls(
                Call("send_message", {"message": "a fairly long message to split"}, id="call_provider_1"),
                Call("archival_memory_search", {"query": "cats", "top_k": 3}),
            )
        )
        events = await collect(client, request(tools=TOOLS))
        result = events[-1]
        assert result.content is None
        assert result.finish_reason == "tool_calls"
        assert [c.name for c in result.tool_calls] == ["send_message", "archival_memory_search"]
        assert result.tool_calls[0].id == "call_provider_1"
        assert result.tool_calls[1].id.startswith("call_mock_")
        assert json.loads(result.tool_calls[0].arguments) == {"message": "a fairly long message to split"}
        assert json.loads(result.tool_calls[1].arguments) == {"query": "cats", "top_k": 3}
        first_call = [e for e in events if isinstance(e, ToolCallDelta) and e.index == 0]
        assert first_call[0].name == "send_message"
        assert all(e.name is None and e.id == "call_provider_1" for e in first_call[1:])
        assert len(first_call) > 2  # the arguments arrived in several fragments
        assert "".join(e.arguments for e in first_call) == result.tool_calls[0].arguments

    async def test_reasoning_deltas_come_before_content(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.text("The answer is 4.", reasoning="Two plus two is four."))
        events = await collect(client, request())
        kinds = [type(e).__name__ for e in events]
        assert kinds.index("ReasoningDelta") < kinds.index("ContentDelta")
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Two plus two is four."
        result = events[-1]
        assert result.reasoning == "Two plus two is four."
        assert result.content == "The answer is 4."
        reported = usage_for(mock.requests[-1], Reply.text("The answer is 4.", reasoning="Two plus two is four."))
        assert result.usage.reasoning_tokens == reported["completion_tokens_details"]["reasoning_tokens"]

    async def test_sends_tool_options(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        await client.chat(
            request(tools=TOOLS, tool_choice="required", parallel_tool_calls=False, temperature=0.3, max_tokens=99)
        )
        sent = mock.requests[-1]
        assert sent["tools"] == TOOLS
        assert sent["tool_choice"] == "required"
        assert sent["parallel_tool_calls"] is False
        assert sent["temperature"] == 0.3
        assert sent["max_tokens"] == 99

    @pytest.mark.parametrize("stream", [True, False])
    async def test_messages_encoded_by_the_loop_are_sent_as_they_are(
        self, mock: MockLLM, client: OpenAICompatibleClient, stream: bool
    ) -> None:
        # What the client is handed is what it posts: the encoded messages (here, on purpose, other than `messages`).
        encoded = [orjson.Fragment(b'{"role":"user","content":"as encoded"}')]
        await client.chat(request(stream=stream, encoded_messages=encoded))
        assert mock.requests[-1]["messages"] == [{"role": "user", "content": "as encoded"}]
        assert mock.requests[-1].get("stream", False) is stream

    async def test_a_body_orjson_refuses_is_encoded_whole_by_the_standard_library(
        self, mock: MockLLM, client: OpenAICompatibleClient
    ) -> None:
        huge = [{**TOOLS[0], "function": {**TOOLS[0]["function"], "x-limit": 2**70}}]
        messages = [{"role": "user", "content": "Hello there"}]
        encoded = [orjson.Fragment(orjson.dumps(messages[0]))]
        await client.chat(request(messages=messages, tools=huge, encoded_messages=encoded))
        assert mock.requests[-1]["messages"] == messages
        assert mock.requests[-1]["tools"][0]["function"]["x-limit"] == 2**70

    async def test_error_after_first_token_is_not_retried(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.text("one two three four five", break_after=2))
        seen: list[str] = []

        async def consume() -> None:
            async for event in client.stream_chat(request()):
                if isinstance(event, ContentDelta):
                    seen.append(event.text)

        with pytest.raises(LLMError) as info:
            await consume()
        # An error object inside the stream has no status: Letta's bare APIError, a bad request unless it names an
        # overflow or exhausted credits.
        assert info.value.error_type == "llm_bad_request"
        assert "".join(seen) == "one two"
        assert len(mock.requests) == 1

    @pytest.mark.parametrize("stream", [True, False])
    async def test_empty_response(self, mock: MockLLM, client: OpenAICompatibleClient, stream: bool) -> None:
        mock.script(Reply.empty())
        with pytest.raises(LLMEmptyResponseError) as info:
            await client.chat(request(stream=stream))
        assert info.value.error_type == "llm_empty_response"
        assert info.value.body()["error"]["message"] == "LLM returned an empty response."


class TestChat:
    async def test_non_streamed_text(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.text("Plain answer", reasoning="hmm"))
        events = await collect(client, request(stream=False))
        assert len(events) == 1
        result = events[0]
        assert result.content == "Plain answer"
        assert result.reasoning == "hmm"
        reported = usage_for(mock.requests[-1], Reply.text("Plain answer", reasoning="hmm"))
        assert result.usage.total_tokens == reported["total_tokens"]
        assert not mock.requests[-1].get("stream")

    async def test_non_streamed_tool_call(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.tool_call("send_message", {"message": "hi"}, id="call_abc"))
        result = await client.chat(request(stream=False, tools=TOOLS))
        assert [(c.id, c.name, json.loads(c.arguments)) for c in result.tool_calls] == [
            ("call_abc", "send_message", {"message": "hi"})
        ]
        assert result.finish_reason == "tool_calls"

    async def test_unscripted_default_reply(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        result = await client.chat(request())
        assert result.content == "OK"


class TestRetries:
    async def test_rate_limit_honours_retry_after(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.error(status=429, retry_after=0.3), Reply.text("after the wait"))
        started = time.monotonic()
        result = await client.chat(request())
        assert time.monotonic() - started >= 0.3
        assert result.content == "after the wait"
        assert len(mock.requests) == 2

    async def test_server_errors_exhaust_retries(self, mock: MockLLM) -> None:
        mock.script(Reply.error(status=500, times=5))
        llm = OpenAICompatibleClient(base_url=mock.base_url, retry=RetryPolicy(max_retries=2, base_delay_s=0.01))
        with pytest.raises(LLMError) as info:
            await llm.chat(request())
        await llm.aclose()
        assert info.value.error_type == "llm_error"
        assert info.value.http_status == 500
        assert info.value.body()["error"]["message"] == "An error occurred with the LLM request."
        assert len(mock.requests) == 3

    async def test_rate_limit_exhausted(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.error(status=429, times=4))
        with pytest.raises(LLMError) as info:
            await client.chat(request(stream=False))
        assert (info.value.error_type, info.value.http_status) == ("llm_rate_limit", 429)
        assert len(mock.requests) == 4

    async def test_authentication_error_is_not_retried(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.error(status=401, message="Incorrect API key provided"))
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        assert (info.value.error_type, info.value.http_status) == ("llm_authentication", 401)
        assert "Incorrect API key provided" in info.value.detail
        assert len(mock.requests) == 1

    async def test_timeout(self, mock: MockLLM) -> None:
        mock.script(Reply.delay(2.0, then=Reply.text("too late")), Reply.delay(2.0))
        llm = OpenAICompatibleClient(
            base_url=mock.base_url, timeout_s=0.5, retry=RetryPolicy(max_retries=1, base_delay_s=0.01)
        )
        started = time.monotonic()
        with pytest.raises(LLMError) as info:
            await llm.chat(request())
        await llm.aclose()
        assert time.monotonic() - started < 1.9
        assert (info.value.error_type, info.value.http_status) == ("llm_timeout", 504)
        # The retry was sent; the mock's thread may log it a moment after the client gave up.
        deadline = time.monotonic() + 2
        while len(mock.requests) < 2 and time.monotonic() < deadline:  # noqa: ASYNC110 (another thread fills it)
            await asyncio.sleep(0.02)
        assert len(mock.requests) == 2

    async def test_connection_refused(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        llm = OpenAICompatibleClient(
            base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=1, base_delay_s=0.01)
        )
        with pytest.raises(LLMError) as info:
            await llm.chat(request())
        await llm.aclose()
        assert info.value.error_type == "llm_error"

    async def test_dropped_connections_are_retried_and_counted(self) -> None:
        accepted: list[int] = []
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(5)

        def drop_every_connection() -> None:
            # Accept and close at once: every attempt fails as a connection error, and each one is counted here.
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                accepted.append(1)
                conn.close()

        threading.Thread(target=drop_every_connection, daemon=True).start()
        port = listener.getsockname()[1]
        llm = OpenAICompatibleClient(
            base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=2, base_delay_s=0.01)
        )
        with pytest.raises(LLMError) as info:
            await llm.chat(request())
        await llm.aclose()
        listener.close()
        assert info.value.error_type == "llm_error"
        assert len(accepted) == 3  # the first attempt and exactly two retries

    async def test_context_window_overflow(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(
            Reply.error(
                status=400,
                message="This model's maximum context length is 8192 tokens.",
                code="context_length_exceeded",
            )
        )
        with pytest.raises(ContextWindowExceededError):
            await client.chat(request())
        assert len(mock.requests) == 1

    def test_parse_retry_after(self) -> None:
        assert parse_retry_after({"retry-after": "2"}) == 2.0
        assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
        assert parse_retry_after({}) is None
        assert parse_retry_after({"retry-after": "soon"}) is None
        http_date = email.utils.formatdate(time.time() + 30, usegmt=True)
        assert 28 <= (parse_retry_after({"retry-after": http_date}) or 0) <= 30


class TestHelpers:
    def test_wire_tool_call_id_truncates_to_29(self) -> None:
        long_id = "toolu_01ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        assert wire_tool_call_id(long_id) == long_id[:29]
        assert wire_tool_call_id("call_short") == "call_short"

    async def test_client_for_openai_uses_max_completion_tokens(self, mock: MockLLM) -> None:
        llm = client_for("openai", mock.base_url, None, timeout_s=5, max_retries=0)
        await llm.chat(request(max_tokens=50))
        await llm.aclose()
        assert mock.requests[-1]["max_completion_tokens"] == 50
        assert "max_tokens" not in mock.requests[-1]

    def test_client_for_rejects_unsupported_endpoint(self) -> None:
        with pytest.raises(BadRequestError):
            client_for("google_ai", "https://generativelanguage.googleapis.com", "key", timeout_s=5, max_retries=0)
