"""Chat completions against any OpenAI-compatible endpoint, with bounded retries and Letta's error types.

``stream_chat`` yields ``ContentDelta`` / ``ReasoningDelta`` / ``ToolCallDelta`` events as they arrive and then
exactly one ``ChatResult``; ``chat`` drains the same generator. Retries happen here (``memlet.llm.retry``), and
only before the first chunk of a stream reaches the caller, so no caller ever sees a token twice.

Failures surface as ``memlet.errors.LLMError`` carrying Letta's ``error_type`` (the tree is in ``memlet.llm.errors``).
The request/event dataclasses live in ``memlet.llm.types`` and the retry policy in ``memlet.llm.retry``; every name
is re-exported here so callers may keep importing from this module.
"""

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import orjson

from memlet.errors import BadRequestError
from memlet.llm import model_quirks as quirks
from memlet.llm.anthropic_client import AnthropicClient
from memlet.llm.anthropic_format import ANTHROPIC_ONLY_KEYS
from memlet.llm.errors import (
    ContextWindowExceededError,
    LLMEmptyResponseError,
    ProviderError,
    check_sendable_endpoint,
    llm_error,
    to_llm_error,
)
from memlet.llm.first_chunk import with_first_chunk
from memlet.llm.openai_http import PLACEHOLDER_API_KEY, EventStream, OpenAIHTTP, encode_json
from memlet.llm.openai_result import StreamAssembler, new_tool_call_id, result_from_completion
from memlet.llm.responses_format import RESPONSES_PATH, responses_body, uses_responses_api
from memlet.llm.responses_stream import ResponsesAssembler, result_from_response
from memlet.llm.retry import RetryPolicy, is_retryable, parse_retry_after, retry_after_seconds, with_retries
from memlet.llm.stream_relay import final_result, metered, relay
from memlet.llm.types import (
    ChatEvent,
    ChatRequest,
    ChatResult,
    ContentDelta,
    HiddenReasoningDelta,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from memlet.llm.wire_errors import ProviderHTTPError
from memlet.net.outbound import OutboundPolicy

__all__ = [
    "OPENAI_COMPATIBLE_ENDPOINTS",
    "PLACEHOLDER_API_KEY",
    "SUPPORTED_ENDPOINTS",
    "TOOL_CALL_ID_MAX_LEN",
    "AnthropicClient",
    "ChatEvent",
    "ChatRequest",
    "ChatResult",
    "ContentDelta",
    "ContextWindowExceededError",
    "HiddenReasoningDelta",
    "LLMClient",
    "LLMEmptyResponseError",
    "OpenAICompatibleClient",
    "ProviderError",
    "ReasoningDelta",
    "RetryPolicy",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "check_endpoint_type",
    "client_for",
    "is_retryable",
    "llm_error",
    "new_tool_call_id",
    "parse_retry_after",
    "retry_after_seconds",
    "to_llm_error",
    "wire_tool_call_id",
    "with_retries",
]

# OpenAI rejects longer tool_call ids; Letta truncates them on the way out and so do we.
TOOL_CALL_ID_MAX_LEN = 29


def wire_tool_call_id(tool_call_id: str) -> str:
    """The id to send to the provider: ids are stored whole but OpenAI accepts at most 29 characters."""
    return tool_call_id[:TOOL_CALL_ID_MAX_LEN]


class LLMClient(Protocol):
    """What the agent loop needs from a chat model."""

    def stream_chat(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        """Yield deltas as they arrive, then one final ``ChatResult``."""
        ...

    async def chat(self, request: ChatRequest) -> ChatResult:
        """The final ``ChatResult`` only."""
        ...


class OpenAICompatibleClient:
    """``LLMClient`` for OpenAI's chat completions API; works with OpenAI, DeepSeek, vLLM, Ollama, LM Studio, ...

    It posts the JSON body itself (``memlet.llm.openai_http``) and reads the answer as plain dicts.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        max_tokens_param: str = "max_tokens",
        policy: OutboundPolicy | None = None,
        provider: str = "openai",
    ) -> None:
        self.retry = retry
        self.provider = provider  # the endpoint type, for metrics
        self._max_tokens_param = max_tokens_param
        self._http = OpenAIHTTP(base_url, api_key, timeout_s, policy)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def chat(self, request: ChatRequest) -> ChatResult:
        """Run the request (streamed or not, per ``request.stream``) and return only the final result."""
        # The same stream, without a delta event built and relayed per chunk.
        return await final_result(metered(self.provider, self._stream_chat(request, deltas=False)))

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """Yield deltas, then one ``ChatResult``; with ``stream=False`` only the result is yielded."""
        return metered(self.provider, self._stream_chat(request))

    async def _stream_chat(self, request: ChatRequest, *, deltas: bool = True) -> AsyncGenerator[ChatEvent, None]:
        if uses_responses_api(request):
            async with contextlib.aclosing(self._stream_responses(request, deltas)) as answered:
                async for event in answered:
                    yield event
            return
        body = _wire_body(self.request_body(request))
        if not request.stream:
            plain = request.sent = _payload(body, request)
            completion = await with_retries(lambda: self._http.post("/chat/completions", plain), self.retry)
            yield result_from_completion(completion)
            return
        payload = request.sent = _payload(body | {"stream": True, "stream_options": {"include_usage": True}}, request)
        stream, first = await with_retries(lambda: self._open_stream(payload), self.retry)
        events = relay(stream, first, StreamAssembler(deltas=deltas), ProviderHTTPError, to_llm_error)
        async with contextlib.aclosing(events) as relayed:
            async for event in relayed:
                yield event

    async def _stream_responses(self, request: ChatRequest, deltas: bool) -> AsyncGenerator[ChatEvent, None]:
        """`request` through OpenAI's Responses API (`memlet.llm.responses_format`), read as Letta reads it."""
        body = responses_body(request, self.provider)
        if not request.stream:
            plain = request.sent = encode_json(body)
            answer = await with_retries(lambda: self._http.post(RESPONSES_PATH, plain), self.retry)
            yield result_from_response(answer)
            return
        streamed = request.sent = encode_json(body | {"stream": True})
        stream, first = await with_retries(lambda: self._open_stream(streamed, RESPONSES_PATH), self.retry)
        events = relay(stream, first, ResponsesAssembler(deltas=deltas), ProviderHTTPError, to_llm_error)
        async with contextlib.aclosing(events) as relayed:
            async for event in relayed:
                yield event

    async def _open_stream(
        self, body: dict[str, Any] | bytes, path: str = "/chat/completions"
    ) -> tuple[EventStream, dict[str, Any] | None]:
        # Reading the first chunk inside the retried call means early stream errors are retried too.
        return await with_first_chunk(await self._http.stream(path, body))

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body this client posts for `request` (the preview endpoint shows it as is)."""
        if uses_responses_api(request):
            return responses_body(request, self.provider)
        # Messages the loop encoded carry none of Anthropic's keys (`ChatRequest.encoded_messages`).
        messages = (
            request.messages if request.encoded_messages is not None else _without_anthropic_keys(request.messages)
        )
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        if (model := quirks.priority_tier_model(self.provider, request.model)) is not None:
            params |= {"model": model, "service_tier": "priority"}
        if request.tools:
            params["tools"] = request.tools
            if request.tool_choice is not None:
                params["tool_choice"] = request.tool_choice
            if request.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = request.parallel_tool_calls
        sampling = quirks.takes_sampling_params(self.provider, request.model)
        if request.temperature is not None and sampling:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params[self._max_tokens_param] = request.max_tokens
        if request.frequency_penalty is not None and sampling:
            params["frequency_penalty"] = request.frequency_penalty
        for name in (
            "response_format",
            "reasoning_effort",
            "verbosity",
            "prompt_cache_retention",
            "user",
            "logprobs",
            "top_logprobs",
        ):
            if (value := getattr(request, name)) is not None:
                params[name] = value
        if request.extra_body:
            params["extra_body"] = request.extra_body
        return params


def _wire_body(params: dict[str, Any]) -> dict[str, Any]:
    """The body as posted: ``extra_body``'s keys merged into the top level (as the SDK merged them)."""
    extra: dict[str, Any] | None = params.get("extra_body")
    if extra is None:
        return dict(params)
    return {k: v for k, v in params.items() if k != "extra_body"} | extra


def _payload(body: dict[str, Any], request: ChatRequest) -> bytes:
    """The body to post, encoded once here (the step's provider trace keeps these bytes): with the request's
    already encoded messages spliced in, when it has them (and orjson takes the rest of the body)."""
    if request.encoded_messages is not None:
        try:
            return orjson.dumps({**body, "messages": request.encoded_messages})
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits in the tools: encoded below, all of it
            pass
    return encode_json(body)


def _without_anthropic_keys(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without what only Anthropic's body reads (signed thinking blocks, tool results' parts)."""
    if not any(key in m for m in messages for key in ANTHROPIC_ONLY_KEYS):
        return messages
    return [{k: v for k, v in m.items() if k not in ANTHROPIC_ONLY_KEYS} for m in messages]


# Endpoint types (Letta's LLMConfig.model_endpoint_type) that speak OpenAI's chat.completions API.
_ENDPOINTS = "openai deepseek groq ollama lmstudio lmstudio-chatcompletions llamacpp vllm mistral together xai zai"
OPENAI_COMPATIBLE_ENDPOINTS = frozenset(f"{_ENDPOINTS} baseten fireworks openrouter hugging-face".split())
# Endpoint types that speak Anthropic's messages API (MiniMax through its Anthropic-compatible API, as Letta does).
ANTHROPIC_ENDPOINTS = frozenset({"anthropic", "minimax"})
# Everything memlet can run an agent on: the OpenAI-compatible endpoints and Anthropic's messages API.
SUPPORTED_ENDPOINTS = OPENAI_COMPATIBLE_ENDPOINTS | ANTHROPIC_ENDPOINTS


def check_endpoint_type(endpoint_type: str) -> None:
    """Raise 400 unless memlet has a chat client for `endpoint_type`."""
    if endpoint_type not in SUPPORTED_ENDPOINTS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Model endpoint type '{endpoint_type}' is not supported; "
            f"use anthropic, minimax or an OpenAI-compatible endpoint ({', '.join(sorted(OPENAI_COMPATIBLE_ENDPOINTS))})"
        )


def client_for(
    endpoint_type: str,
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    max_retries: int = 3,
    *,
    retry_base_delay_s: float = 0.5,
    policy: OutboundPolicy | None = None,
) -> "OpenAICompatibleClient | AnthropicClient":
    """Build the chat client for one of Letta's model endpoint types (`policy`: check every connection against
    it, for a user-given URL)."""
    check_endpoint_type(endpoint_type)
    check_sendable_endpoint(base_url)
    retry = RetryPolicy(max_retries=max_retries, base_delay_s=retry_base_delay_s)
    if endpoint_type in ANTHROPIC_ENDPOINTS:
        from memlet.net.transport import guarded_client  # httpx2, which only the Anthropic SDK needs here

        http = guarded_client(policy, timeout_s=timeout_s) if policy is not None else None
        return AnthropicClient(base_url=base_url, api_key=api_key, timeout_s=timeout_s, retry=retry, http_client=http)
    # OpenAI itself rejects max_tokens for reasoning models; its successor name works for all its models.
    param = "max_completion_tokens" if endpoint_type == "openai" else "max_tokens"
    return OpenAICompatibleClient(
        base_url=base_url,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=retry,
        max_tokens_param=param,
        policy=policy,
        provider=endpoint_type,
    )
