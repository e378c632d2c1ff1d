"""memlet's own HTTP layer for OpenAI-compatible providers: the SSE decoder, malformed answers, error mapping per
status code (against the mock LLM server), and the same exception texts the openai SDK gave."""

import json
from collections.abc import AsyncIterator, Iterator

import httpx2
import openai
import pytest

from memlet.errors import LLMError
from memlet.llm.client import (
    ChatRequest,
    ChatResult,
    ContentDelta,
    ContextWindowExceededError,
    LLMEmptyResponseError,
    OpenAICompatibleClient,
    RetryPolicy,
)
from memlet.llm.embeddings import OpenAICompatibleEmbeddingClient
from memlet.llm.openai_http import PLACEHOLDER_API_KEY, join_url, user_agent
from memlet.llm.sse import ServerEvent, SSEDecoder
from memlet.llm.wire_errors import status_error
from memlet.net.fetch import UnsendableRequestError
from tests.mock_llm import MockLLM, Reply

FAST_RETRY = RetryPolicy(max_retries=2, base_delay_s=0.01)


def chunk(content: str, finish: str | None = None) -> str:
    body = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n"


STREAM = chunk("Hello") + chunk(" there", "stop") + "data: [DONE]\n\n"


class TestSSEDecoder:
    def test_whole_and_byte_by_byte_reads_give_the_same_events(self) -> None:
        whole = SSEDecoder().feed(STREAM.encode())
        split = SSEDecoder()
        events = [event for byte in STREAM.encode() for event in split.feed(bytes([byte]))]
        assert events == whole
        assert [e.data for e in events][-1] == b"[DONE]"
        assert json.loads(events[0].data)["choices"][0]["delta"]["content"] == "Hello"

    @pytest.mark.parametrize(
        "reads",
        [
            [b"data: {}\n\n", b"data: two\n\n"],  # one event per read (the short path)
            [b"data: x\n", b"data: y\n\n"],  # a read that ends inside an event
            [b"data: a\r\n\r\n", b"data:  b\n\n"],  # CRLF; a value that keeps its second space
            [b"data: a", b"\n\n", b"data: \n\n"],  # a line split across reads; empty data
            [b"event: e\n", b"data: z\n\n"],  # a named event
        ],
    )
    def test_one_event_per_read_is_read_as_byte_by_byte(self, reads: list[bytes]) -> None:
        decoder, split = SSEDecoder(), SSEDecoder()
        events = [event for read in reads for event in decoder.feed(read)]
        assert events == [event for byte in b"".join(reads) for event in split.feed(bytes([byte]))]
        assert events

    def test_a_read_of_one_data_event_skips_the_line_parser(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def no_lines(*args: object) -> None:
            raise AssertionError("parsed line by line")

        monkeypatch.setattr(SSEDecoder, "_line", no_lines)
        assert SSEDecoder().feed(b'data: {"a":1}\n\n') == [ServerEvent(b'{"a":1}')]

    def test_crlf_split_across_reads_is_one_line_end(self) -> None:
        decoder = SSEDecoder()
        # A CR ending one read and an LF starting the next is one line end, not an empty line ending the event.
        events = decoder.feed(b"data: a\r") + decoder.feed(b"\ndata: b\r\n") + decoder.feed(b"\r\n")
        assert events == [ServerEvent(b"a\nb")]

    def test_cr_only_line_ends(self) -> None:
        decoder = SSEDecoder()
        # A CR that ends a read may be half of a CRLF: its line completes with the next read (or the body's end).
        assert decoder.feed(b"data: x\r\rdata: y\r\r") == [ServerEvent(b"x")]
        assert decoder.flush() == [ServerEvent(b"y")]

    def test_comments_keepalives_and_blank_lines_are_skipped(self) -> None:
        text = b": OPENROUTER PROCESSING\n\n\n\n:ping\n\nid: 7\nretry: 100\n\ndata: {}\n\n"
        assert SSEDecoder().feed(text) == [ServerEvent(b"{}")]

    def test_event_names_and_data_without_a_space(self) -> None:
        assert SSEDecoder().feed(b'event: error\ndata:{"a":1}\n\n') == [ServerEvent(b'{"a":1}', "error")]

    def test_flush_keeps_a_last_event_without_its_blank_line(self) -> None:
        decoder = SSEDecoder()
        assert decoder.feed(b"data: one\n\ndata: two") == [ServerEvent(b"one")]
        assert decoder.flush() == [ServerEvent(b"two")]


class TestURLsAndHeaders:
    @pytest.mark.parametrize("base", ["https://api.example.com/v1", "https://api.example.com/v1/"])
    def test_base_url_joins_with_or_without_trailing_slash(self, base: str) -> None:
        assert str(join_url(base, "/chat/completions")) == "https://api.example.com/v1/chat/completions"

    def test_host_only_base_url(self) -> None:
        assert str(join_url("http://localhost:11434", "/api/embed")) == "http://localhost:11434/api/embed"

    def test_query_and_escapes_of_the_base_url_stay(self) -> None:
        joined = join_url("https://h:8443/a%20b/v1?api-version=2024", "chat/completions")
        assert str(joined) == "https://h:8443/a%20b/v1/chat/completions?api-version=2024"

    @pytest.mark.parametrize(
        "base", ["https://api.open\x17ai.com/v1", "https://api.example.com/v1\n", "http://[::1/v1"]
    )
    def test_a_base_url_that_cannot_be_sent_is_refused(self, base: str) -> None:
        with pytest.raises(UnsendableRequestError):
            join_url(base, "chat/completions")

    async def test_bearer_key_json_headers_and_user_agent(self, mock: MockLLM) -> None:
        for key, expected in (("sk-real", "Bearer sk-real"), (None, f"Bearer {PLACEHOLDER_API_KEY}")):
            llm = OpenAICompatibleClient(base_url=mock.base_url, api_key=key, retry=FAST_RETRY)
            await llm.chat(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]))
            await llm.aclose()
            headers = mock.chat_headers[-1]
            assert headers["authorization"] == expected
            assert headers["content-type"] == "application/json"
            assert headers["accept"] == "application/json"
            assert headers["user-agent"] == user_agent() == f"AsyncOpenAI/Python {openai.__version__}"


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


def request(stream: bool = True) -> ChatRequest:
    return ChatRequest(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hello"}], stream=stream)


class TestMalformedStreams:
    async def test_keepalives_comments_and_split_events(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        first, second = chunk("Hel"), chunk("lo", "stop")
        mock.script(Reply.raw(": keep-alive\n\n", first[:20], first[20:] + "\n", second, "data: [DONE]\n\n"))
        events = [e async for e in client.stream_chat(request())]
        assert [e.text for e in events if isinstance(e, ContentDelta)] == ["Hel", "lo"]
        assert isinstance(events[-1], ChatResult)
        assert (events[-1].content, events[-1].finish_reason) == ("Hello", "stop")

    async def test_done_ends_the_stream(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.raw(STREAM, "data: this is past the end\n\n"))
        assert (await client.chat(request())).content == "Hello there"

    async def test_garbage_first_event_is_an_llm_error_not_retried(
        self, mock: MockLLM, client: OpenAICompatibleClient
    ) -> None:
        mock.script(Reply.raw("data: <html>Bad gateway</html>\n\n"))
        with pytest.raises(LLMEmptyResponseError) as info:
            await client.chat(request())
        assert info.value.error_type == "llm_empty_response"
        assert "Unparsable" in info.value.detail and "Bad gateway" in info.value.detail
        assert len(mock.requests) == 1

    async def test_garbage_mid_stream_ends_it_with_an_llm_error(
        self, mock: MockLLM, client: OpenAICompatibleClient
    ) -> None:
        mock.script(Reply.raw(chunk("partial"), "data: {not json\n\n"))
        seen: list[str] = []

        async def consume() -> None:
            async for event in client.stream_chat(request()):
                if isinstance(event, ContentDelta):
                    seen.append(event.text)

        with pytest.raises(LLMEmptyResponseError):
            await consume()
        assert seen == ["partial"]
        assert len(mock.requests) == 1

    async def test_error_object_as_first_event(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.raw('data: {"error": {"message": "upstream exploded", "code": 502}}\n\n'))
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        # No status: Letta's bare APIError, a bad request (its `code` is the provider's, not an HTTP answer).
        assert (info.value.error_type, info.value.http_status) == ("llm_bad_request", 400)
        assert info.value.detail == "INVALID_ARGUMENT: LLM provider error: upstream exploded"
        assert len(mock.requests) == 1  # an error inside a 200 stream is not retried

    async def test_error_object_without_a_message(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.raw(chunk("a"), 'data: {"error": "boom"}\n\n'))
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        assert info.value.detail.endswith("An error occurred during streaming")

    async def test_context_overflow_inside_a_stream(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        message = "This model's maximum context length is 8192 tokens."
        mock.script(Reply.raw(f'data: {{"error": {{"message": "{message}"}}}}\n\n'))
        with pytest.raises(ContextWindowExceededError):
            await client.chat(request())

    async def test_stream_that_ends_without_done_or_events(self, mock: MockLLM, client: OpenAICompatibleClient) -> None:
        mock.script(Reply.raw(chunk("no done marker", "stop").rstrip("\n")))
        assert (await client.chat(request())).content == "no done marker"
        mock.script(Reply.raw(": nothing but a comment\n\n"))
        with pytest.raises(LLMEmptyResponseError):
            await client.chat(request())

    async def test_a_lone_surrogate_escape_is_read_not_refused(
        self, mock: MockLLM, client: OpenAICompatibleClient
    ) -> None:
        """orjson refuses "\\ud800"; the model's text still arrives (memlet cleans it before storing it)."""
        mock.script(Reply.raw(chunk("before\ud800after", "stop"), "data: [DONE]\n\n"))
        assert (await client.chat(request())).content == "before\ud800after"
        message = {"role": "assistant", "content": "x\ud800"}
        body = {"id": "c1", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        mock.script(Reply.raw(json.dumps(body), content_type="application/json"))
        assert (await client.chat(request(stream=False))).content == "x\ud800"

    @pytest.mark.parametrize(
        ("body", "content_type"),
        [("plain words", "text/plain"), ("{truncated", "application/json"), ('{"choices": []}', "application/json")],
    )
    async def test_unusable_non_streamed_body(
        self, mock: MockLLM, client: OpenAICompatibleClient, body: str, content_type: str
    ) -> None:
        mock.script(Reply.raw(body, content_type=content_type))
        with pytest.raises(LLMEmptyResponseError) as info:
            await client.chat(request(stream=False))
        assert "Unusable LLM response" in info.value.detail
        assert len(mock.requests) == 1

    async def test_unusable_embedding_body(self, mock: MockLLM) -> None:
        mock.script_embeddings(Reply.raw('{"data": "nope"}', content_type="application/json"))
        embedder = OpenAICompatibleEmbeddingClient(base_url=mock.base_url, retry=FAST_RETRY)
        with pytest.raises(LLMEmptyResponseError):
            await embedder.embed(["hello"], model="text-embedding-3-small")
        await embedder.aclose()


CREDITS = "You exceeded your current quota, please check your plan and billing details."
OVERFLOW = "This model's maximum context length is 8192 tokens."


class TestStatusMapping:
    """Every status a provider answers with, as the error memlet raises and whether it was retried."""

    @pytest.mark.parametrize(
        ("status", "message", "error_type", "http_status", "attempts"),
        [
            (400, "Invalid value for 'tools'", "llm_bad_request", 400, 1),
            (401, "Incorrect API key provided", "llm_authentication", 401, 1),
            (402, "Payment required", "llm_insufficient_credits", 402, 1),
            # Letta's LLMPermissionDenied / NotFound / UnprocessableEntity errors: its API's plain 500 llm_error.
            (403, "Project does not have access", "llm_error", 500, 1),
            (404, "The model does not exist", "llm_error", 500, 1),
            (408, "Request timeout", "llm_bad_request", 400, 3),
            (409, "Conflict", "llm_bad_request", 400, 3),
            (422, "Unprocessable", "llm_error", 500, 1),
            (429, "Rate limit reached", "llm_rate_limit", 429, 3),
            (429, CREDITS, "llm_rate_limit", 429, 1),  # exhausted quota: not worth retrying
            (500, "Internal error", "llm_error", 500, 3),
            (502, "Bad gateway", "llm_error", 500, 3),
            (503, "Overloaded", "llm_error", 500, 3),
        ],
    )
    @pytest.mark.parametrize("stream", [True, False])
    async def test_status(
        self,
        mock: MockLLM,
        client: OpenAICompatibleClient,
        status: int,
        message: str,
        error_type: str,
        http_status: int,
        attempts: int,
        stream: bool,
    ) -> None:
        mock.script(Reply.error(status=status, message=message, times=3))
        with pytest.raises(LLMError) as info:
            await client.chat(request(stream))
        assert (info.value.error_type, info.value.http_status) == (error_type, http_status)
        assert f"Error code: {status} - {message}" in info.value.detail
        assert len(mock.requests) == attempts

    @pytest.mark.parametrize("stream", [True, False])
    async def test_context_window_exceeded(self, mock: MockLLM, client: OpenAICompatibleClient, stream: bool) -> None:
        mock.script(Reply.error(status=400, message=OVERFLOW, code="context_length_exceeded"))
        with pytest.raises(ContextWindowExceededError) as info:
            await client.chat(request(stream))
        assert (
            str(info.value)
            == f"CONTEXT_WINDOW_EXCEEDED: The LLM context window was exceeded: Error code: 400 - {OVERFLOW}"
        )

    @pytest.mark.parametrize("stream", [True, False])
    async def test_a_413_is_a_context_overflow(
        self, mock: MockLLM, client: OpenAICompatibleClient, stream: bool
    ) -> None:
        mock.script(Reply.error(status=413, message="Request too large"))
        with pytest.raises(ContextWindowExceededError):
            await client.chat(request(stream))
        assert len(mock.requests) == 1

    async def test_non_json_error_body_names_the_status_only(
        self, mock: MockLLM, client: OpenAICompatibleClient
    ) -> None:
        mock.script(Reply.raw("<html>502 Bad Gateway</html>", status=502, content_type="text/html"))
        mock.script(Reply.text("recovered"))
        assert (await client.chat(request())).content == "recovered"  # a 5xx is retried
        mock.reset()
        mock.script(Reply.raw("<html>nope</html>", status=403, content_type="text/html"))
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        assert info.value.detail == "PERMISSION_DENIED: The LLM provider refused access: Error code: 403"


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (400, '{"error": {"message": "bad tools", "type": "invalid_request_error", "code": null}}'),
        (401, '{"error": {"message": "", "type": "auth"}}'),
        (404, '{"error": "model not found"}'),
        (422, '{"object": "error", "message": "vLLM style", "code": 422}'),
        (429, '{"detail": "no message here"}'),
        (500, "Internal Server Error"),
        (503, ""),
        (400, "[1, 2]"),
    ],
)
def test_status_errors_read_as_the_openai_sdk_read_them(status: int, text: str) -> None:
    request = httpx2.Request("POST", "https://api.example.com/v1/chat/completions")
    response = httpx2.Response(status, text=text, request=request)
    sdk = openai.AsyncOpenAI(api_key="k", base_url="https://api.example.com/v1")
    expected = sdk._make_status_error_from_response(response)
    ours = status_error(status, response.text, response.headers)
    assert (str(ours), ours.status_code, ours.body) == (str(expected), expected.status_code, expected.body)
