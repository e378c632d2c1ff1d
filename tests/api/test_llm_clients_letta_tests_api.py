"""What the LLM clients send and how provider failures read, after Letta 0.16.8's tests of its clients
(tests/test_llm_clients.py, tests/adapters/test_letta_llm_stream_adapter_error_handling.py and
tests/test_sonnet_nonnative_reasoning_buffering.py): the request headers a provider gets, and the HTTP status, error
type and stop reason a user sees when the provider refuses or breaks off.
"""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_anthropic_api import make_agent
from tests.api.test_compaction_api import agent_with_history, kinds
from tests.api.test_messages_api import make_agent as messages_agent
from tests.api.test_messages_api import send
from tests.mock_llm import MockLLM, Reply

FINE_GRAINED = "fine-grained-tool-streaming-2025-05-14"
CANNOT_AFFORD = (
    "This request requires more credits, or fewer max_tokens. You requested up to 65536 tokens, "
    "but can only afford 2679."
)
# The first chunk of an OpenAI-style stream.
CHUNK = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'


def sse_events(text: str) -> list[tuple[str | None, str]]:
    events, name = [], None
    for line in text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, line[6:]))
            name = None
    return events


class TestAnthropicStreamingHeaders:
    def test_a_token_stream_asks_for_fine_grained_tool_streaming(
        self, claude: Letta, claude_server: Any, mock_llm: MockLLM
    ) -> None:
        """Letta's streaming path sends the fine-grained tool streaming beta (tool arguments, where a non-native
        reasoner's thoughts and messages live, then stream as written); its blocking path does not."""
        agent = make_agent(claude)
        mock_llm.script(Reply.text("Hello Bob."))
        with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
            body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
            streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        assert streamed.status_code == 200
        chunks = [json.loads(d) for _, d in sse_events(streamed.text) if d.startswith("{")]
        assert "".join(c["content"] for c in chunks if c["message_type"] == "assistant_message") == "Hello Bob."
        [request] = mock_llm.requests
        assert request["_beta"].split(",") == [FINE_GRAINED, "interleaved-thinking-2025-05-14"]

        mock_llm.reset()
        mock_llm.script(Reply.text("Hello again."))
        claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi again"}])
        [blocking] = mock_llm.requests
        assert FINE_GRAINED not in blocking.get("_beta", "")


def llm_error_body(detail_part: str, response: httpx.Response) -> None:
    assert response.status_code == 500, response.text
    error = response.json()["error"]
    assert (error["type"], error["message"]) == ("llm_error", "An error occurred with the LLM request.")
    assert detail_part in error["detail"]


class TestOpenAICompatibleErrors:
    """Letta's `OpenAIClient.handle_llm_error`: which error a provider's answer becomes."""

    @pytest.mark.parametrize("status", [403, 404, 422])
    def test_refusals_are_llm_errors(self, client: Letta, http: httpx.Client, mock_llm: MockLLM, status: int) -> None:
        """A 403, 404 (a model the endpoint does not serve) or 422 is Letta's LLMPermissionDenied / NotFound /
        UnprocessableEntity error, which its API answers as a plain 500 llm_error (not a bad request)."""
        mock_llm.reset()
        agent = messages_agent(client)
        mock_llm.script(Reply.error(status, times=10, message="The model `gpt-9` does not exist"))
        llm_error_body("The model `gpt-9` does not exist", send(http, agent.id, "hi"))
        assert len(mock_llm.requests) == 1  # not retried
        [run] = client.runs.list(agent_id=agent.id)
        assert run.stop_reason == "llm_api_error"

    @pytest.mark.parametrize(
        "overflow",
        [
            Reply.error(413, message="Request Entity Too Large"),
            Reply.error(400, message="Input tokens exceed the configured limit of 272000 tokens."),
            Reply.error(400, message="The prompt is too big", code="context_length_exceeded"),
        ],
        ids=["413", "configured-limit", "by-code"],
    )
    def test_context_overflows_compact_and_retry(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM, overflow: Reply
    ) -> None:
        """A 413 and the overflow texts Letta knows (or the error's `context_length_exceeded` code) are a context
        overflow: the history is compacted and the step retried, not answered with a bad request."""
        agent_id = agent_with_history(client, mock_llm)
        mock_llm.script(overflow, Reply.text("Summary before retry."), Reply.text("after the retry"))
        response = send(http, agent_id, "hello")
        assert response.status_code == 200, response.text
        assert kinds(mock_llm) == ["step", "summary", "step"]
        assert response.json()["messages"][-1]["content"] == "after the retry"

    @pytest.mark.parametrize(
        ("message", "status", "error_type"),
        [
            (CANNOT_AFFORD, 402, "llm_insufficient_credits"),
            ("Some other API error occurred", 400, "llm_bad_request"),
        ],
    )
    def test_an_error_inside_the_stream(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM, message: str, status: int, error_type: str
    ) -> None:
        """An error object inside the provider's stream (no status: the SDK's bare APIError in Letta) is exhausted
        credits when it says so (OpenRouter's mid-stream "can only afford"), else a bad request."""
        mock_llm.reset()
        agent = messages_agent(client)
        mock_llm.script(Reply.raw(CHUNK, f"data: {json.dumps({'error': {'message': message, 'code': 402}})}\n\n"))
        response = send(http, agent.id, "hi")
        assert response.status_code == status, response.text
        assert response.json()["error"]["type"] == error_type and message in response.json()["error"]["detail"]

    def test_an_html_page_is_a_bad_request_that_says_so(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        mock_llm.reset()
        agent = messages_agent(client)
        page = "<html><body><h1>400 Bad Request</h1></body></html>"
        mock_llm.script(Reply.raw(page, status=400, content_type="text/html"))
        response = send(http, agent.id, "hi")
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["type"] == "llm_bad_request" and "OpenAI-compatible" in error["detail"]


def anthropic_event(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n"


# An Anthropic stream that has started a text block and sent its first words.
STARTED = (
    anthropic_event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5-20250929",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    ),
    anthropic_event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    anthropic_event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
    ),
)


class TestAnthropicErrors:
    """Letta's `AnthropicClient.handle_llm_error`, and a stream the connection breaks off."""

    @pytest.mark.parametrize(("status", "calls"), [(404, 1), (409, 4)])
    def test_statuses_letta_answers_as_llm_errors(
        self, claude: Letta, claude_server: Any, mock_llm: MockLLM, status: int, calls: int
    ) -> None:
        """A 404 (a model Anthropic does not serve) is Letta's LLMNotFoundError and a 409 its LLMServerError: both
        a plain 500 llm_error (a 409 is retried first), not a bad request."""
        agent = make_agent(claude)
        mock_llm.script(Reply.error(status, times=10, message="model: claude-9"))
        with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
            llm_error_body("model: claude-9", send(http, agent.id, "hi"))
        assert len(mock_llm.requests) == calls

    def test_a_stream_broken_off_is_an_llm_error(self, claude: Letta, claude_server: Any, mock_llm: MockLLM) -> None:
        """The connection drops mid-stream ("peer closed connection"): Letta's LLMConnectionError. A blocking send
        answers 500 llm_error; a token stream that had begun ends with stop_reason llm_api_error and the error
        event Letta sends once chunks went out; the run stops with llm_api_error."""
        agent = make_agent(claude)
        mock_llm.script(Reply.raw(*STARTED, cut=True))
        with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
            llm_error_body("broke off", send(http, agent.id, "hi"))
            mock_llm.script(Reply.raw(*STARTED, cut=True))
            body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
            streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        events = [(n, d) for n, d in sse_events(streamed.text) if '"message_type":"ping"' not in d]
        assert json.loads(events[0][1])["content"] == "Hello"
        assert json.loads(events[-3][1]) == {"message_type": "stop_reason", "stop_reason": "llm_api_error"}
        name, data = events[-2]
        error = json.loads(data)
        assert name == "error" and error["error_type"] == "internal_error"
        assert error["message"] == "An error occurred during agent execution."
        assert "broke off" in error["detail"] and "peer closed connection" in error["detail"]  # the cause
        assert events[-1] == (None, "[DONE]")
        runs = claude.runs.list(agent_id=agent.id)
        assert [r.stop_reason for r in runs] == ["llm_api_error", "llm_api_error"]


class TestAnthropicRequests:
    def test_whitespace_only_text_is_left_out(self, claude: Letta, mock_llm: MockLLM) -> None:
        """Anthropic refuses a text block of only whitespace; Letta drops them (and a message left empty) from
        every request, so a model's "\\n\\n" before a tool call does not break the agent's next turn."""
        agent = make_agent(claude)
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea"}, content="\n\n"), Reply.text("Found nothing.")
        )
        claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "tea?"}])
        mock_llm.script(Reply.text("Hi."))
        claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])
        for request in mock_llm.requests[1:]:
            blocks = [b for m in request["messages"] for b in m["content"] if b["type"] == "text"]
            assert blocks and all(b["text"].strip() for b in blocks), request["messages"]
        [_, call, _, _, _] = mock_llm.requests[-1]["messages"]
        assert [b["type"] for b in call["content"]] == ["tool_use"]


def test_an_overloaded_provider_is_a_plain_503(claude: Letta, claude_server: Any, mock_llm: MockLLM) -> None:
    """Letta's LLMProviderOverloaded has a handler of its own: a 503 `{"detail": ...}`, not the llm_* error shape;
    a stream names it llm_error."""
    agent = make_agent(claude)
    mock_llm.script(Reply.error(529, times=10, message="Overloaded"))
    with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
        blocking = send(http, agent.id, "hi")
        assert blocking.status_code == 503, blocking.text
        assert list(blocking.json()) == ["detail"] and "Overloaded" in blocking.json()["detail"]
        body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
        streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
    [error] = [json.loads(d) for n, d in sse_events(streamed.text) if n == "error"]
    assert (error["error_type"], error["message"]) == ("llm_error", "An error occurred with the LLM request.")
    assert "Overloaded" in error["detail"]


def test_errors_of_a_byok_key_say_so(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta marks errors of a call made with a BYOK provider's key: the detail ends with " [BYOK]", and a rate
    limit or exhausted credits answers with the messages that point at the user's own key (streams keep theirs)."""
    mock_llm.reset()
    body = {"name": "my-keys", "provider_type": "openai", "api_key": "sk-mine", "base_url": mock_llm.base_url}
    assert http.post("/v1/providers/", json=body).status_code == 200
    agent = client.agents.create(model="my-keys/gpt-4o-mini")
    assert agent.llm_config.provider_category == "byok"
    mock_llm.script(Reply.error(429, times=10, message="Slow down"))
    limited = send(http, agent.id, "hi")
    assert limited.status_code == 429
    assert limited.json()["error"] == {
        "type": "llm_rate_limit",
        "message": "Rate limit exceeded on your API key. Please check your provider's rate limits and billing, "
        "or reduce request frequency.",
        "detail": limited.json()["error"]["detail"],
    }
    assert "Slow down" in limited.json()["error"]["detail"] and limited.json()["error"]["detail"].endswith(" [BYOK]")
    mock_llm.reset()
    mock_llm.script(Reply.error(402, times=10, message="Top up"))
    broke = send(http, agent.id, "hi")
    assert broke.status_code == 402 and broke.json()["error"]["message"] == (
        "Insufficient credits on your API key. Please add credits with your LLM provider."
    )
    mock_llm.reset()
    mock_llm.script(Reply.error(429, times=10, message="Slow down"))
    streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json={"input": "hi", "stream_tokens": True})
    [error] = [json.loads(d) for n, d in sse_events(streamed.text) if n == "error"]
    assert error["message"] == "Rate limit exceeded for LLM model provider. Please wait before making another request."
    assert error["detail"].endswith(" [BYOK]")


@pytest.mark.parametrize(
    "reply", [Reply.empty(), Reply(reasoning="Hmm.", finish_reason="stop")], ids=["empty", "thinking"]
)
def test_an_empty_anthropic_token_stream_of_a_v2_agent(
    claude: Letta, claude_server: Any, mock_llm: MockLLM, reply: Reply
) -> None:
    """Letta's V2 loop reads an Anthropic token stream with an interface that fails one with neither text nor a
    tool call (thinking alone included): stop_reason invalid_llm_response and an llm_empty_response error."""
    agent = make_agent(claude, agent_type="memgpt_v2_agent")
    mock_llm.script(reply)
    with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
        body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
        streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
    events = [(n, json.loads(d)) for n, d in sse_events(streamed.text) if d.startswith("{") and "ping" not in d]
    assert events[-1][0] == "error"
    assert events[-2][1] == {"message_type": "stop_reason", "stop_reason": "invalid_llm_response"}
    error = events[-1][1]
    assert (error["error_type"], error["message"]) == ("llm_empty_response", "LLM returned an empty response.")
    assert error["detail"].startswith("INTERNAL_SERVER_ERROR: LLM provider")
