"""Chat completions against any OpenAI-compatible endpoint, with bounded retries and Letta's error types.

``stream_chat`` yields ``ContentDelta`` / ``ReasoningDelta`` / ``ToolCallDelta`` events as they arrive and then
exactly one ``ChatResult``; ``chat`` drains the same generator. Retries happen here (the SDK's are off), and only
before the first chunk of a stream reaches the caller, so no caller ever sees a token twice.

Failures surface as ``memlet.errors.LLMError`` carrying Letta's ``error_type`` (the tree is in ``memlet.llm.errors``).
The request/event dataclasses live in ``memlet.llm.types`` and the retry policy in ``memlet.llm.retry``; every name
is re-exported here so callers may keep importing from this module.
"""

import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageToolCall
from openai.types.completion_usage import CompletionUsage

from memlet.errors import BadRequestError
from memlet.llm.anthropic_client import AnthropicClient
from memlet.llm.anthropic_format import THINKING_BLOCKS_KEY
from memlet.llm.errors import (
    ContextWindowExceededError,
    LLMEmptyResponseError,
    ProviderError,
    llm_error,
    to_llm_error,
)
from memlet.llm.first_chunk import with_first_chunk
from memlet.llm.retry import RetryPolicy, is_retryable, parse_retry_after, retry_after_seconds, with_retries
from memlet.llm.stream_relay import final_result, metered, relay
from memlet.llm.types import (
    ChatEvent,
    ChatRequest,
    ChatResult,
    ContentDelta,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)

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

# Local servers (vLLM, Ollama, LM Studio) ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "sk-no-key"
# OpenAI rejects longer tool_call ids; Letta truncates them on the way out and so do we.
TOOL_CALL_ID_MAX_LEN = 29


def wire_tool_call_id(tool_call_id: str) -> str:
    """The id to send to the provider: ids are stored whole but OpenAI accepts at most 29 characters."""
    return tool_call_id[:TOOL_CALL_ID_MAX_LEN]


def new_tool_call_id() -> str:
    """An OpenAI-shaped id for providers that omit one (exactly 29 characters)."""
    return f"call_{uuid.uuid4().hex[:24]}"


class LLMClient(Protocol):
    """What the agent loop needs from a chat model."""

    def stream_chat(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        """Yield deltas as they arrive, then one final ``ChatResult``."""
        ...

    async def chat(self, request: ChatRequest) -> ChatResult:
        """The final ``ChatResult`` only."""
        ...


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage()
    prompt_details = usage.prompt_tokens_details
    completion_details = usage.completion_tokens_details
    # DeepSeek reports cache hits in its own top-level field.
    cached = (prompt_details.cached_tokens if prompt_details else None) or getattr(
        usage, "prompt_cache_hit_tokens", None
    )
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        total_tokens=usage.total_tokens or 0,
        cached_tokens=cached or 0,
        reasoning_tokens=(completion_details.reasoning_tokens if completion_details else None) or 0,
    )


def _reasoning_of(obj: object) -> str | None:
    return getattr(obj, "reasoning_content", None) or getattr(obj, "reasoning", None)


@dataclass
class _PartialCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _StreamAssembler:
    """Turns chat.completion.chunk objects into events and remembers enough to build the final result."""

    def __init__(self) -> None:
        self.content: list[str] | None = None
        self.reasoning: list[str] = []
        self.calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.usage: CompletionUsage | None = None
        self.model: str | None = None
        self.response_id: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[ChatEvent]:
        self.model = chunk.model or self.model
        self.response_id = chunk.id or self.response_id
        self.usage = chunk.usage or self.usage
        events: list[ChatEvent] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            if reasoning := _reasoning_of(delta):
                self.reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            if delta.content is not None:
                self.content = [*(self.content or []), delta.content]
                if delta.content:
                    events.append(ContentDelta(delta.content))
            for tc in delta.tool_calls or []:
                events.extend(self._feed_tool_call(tc.index, tc.id, tc.function))
        return events

    def _feed_tool_call(self, index: int, call_id: str | None, function: Any) -> list[ChatEvent]:
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = _PartialCall(id=call_id or new_tool_call_id())
        name = function.name if function is not None else None
        fragment = (function.arguments if function is not None else None) or ""
        # Some providers repeat the name on every chunk; only the first one is news.
        new_name = name if name and not call.name else None
        if new_name:
            call.name = new_name
        call.arguments.append(fragment)
        if new_name is None and not fragment:
            return []
        return [ToolCallDelta(index=index, id=call.id, name=new_name, arguments=fragment)]

    def result(self) -> ChatResult:
        content = None if self.content is None else "".join(self.content)
        reasoning = "".join(self.reasoning) or None
        calls = [ToolCall(c.id, c.name, "".join(c.arguments)) for _, c in sorted(self.calls.items())]
        if content is None and not calls and reasoning is None:
            raise LLMEmptyResponseError(
                f"INTERNAL_SERVER_ERROR: LLM provider streamed no content and no tool calls "
                f"(ID: {self.response_id}, model: {self.model}, finish_reason: {self.finish_reason})"
            )
        return ChatResult(
            content, calls, self.finish_reason, _usage(self.usage), reasoning, self.model, self.response_id
        )


def _result_from_completion(completion: object) -> ChatResult:
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unusable LLM response: {str(completion)[:500]}")
    choice = completion.choices[0]
    message = choice.message
    calls = [
        ToolCall(tc.id or new_tool_call_id(), tc.function.name, tc.function.arguments or "")
        for tc in message.tool_calls or []
        if isinstance(tc, ChatCompletionMessageToolCall)  # custom (non-function) tool calls are not ours
    ]
    if message.content is None and not calls:
        raise LLMEmptyResponseError(
            f"INTERNAL_SERVER_ERROR: LLM provider returned empty content in response "
            f"(ID: {completion.id}, model: {completion.model}, finish_reason: {choice.finish_reason})"
        )
    return ChatResult(
        message.content,
        calls,
        choice.finish_reason,
        _usage(completion.usage),
        _reasoning_of(message),
        completion.model,
        completion.id,
    )


def openai_sdk(
    base_url: str, api_key: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
) -> openai.AsyncOpenAI:
    """The SDK client of every OpenAI-compatible client: the SDK's own retries off (``with_retries`` retries), and
    a placeholder key for servers that need none."""
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or PLACEHOLDER_API_KEY,
        timeout=timeout_s,
        max_retries=0,
        http_client=http_client,
    )


class OpenAICompatibleClient:
    """``LLMClient`` over ``openai.AsyncOpenAI``; works with OpenAI, DeepSeek, vLLM, Ollama, LM Studio, ..."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        max_tokens_param: str = "max_tokens",
        http_client: httpx2.AsyncClient | None = None,
        provider: str = "openai",
    ) -> None:
        self.retry = retry
        self.provider = provider  # the endpoint type, for metrics
        self._max_tokens_param = max_tokens_param
        self._sdk = openai_sdk(base_url, api_key, timeout_s, http_client)

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        """The underlying SDK client (the embedding client shares it)."""
        return self._sdk

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._sdk.close()

    async def chat(self, request: ChatRequest) -> ChatResult:
        """Run the request (streamed or not, per ``request.stream``) and return only the final result."""
        return await final_result(self.stream_chat(request))

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """Yield deltas, then one ``ChatResult``; with ``stream=False`` only the result is yielded."""
        return metered(self.provider, self._stream_chat(request))

    async def _stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        params = self.request_body(request)
        if not request.stream:
            completion = await with_retries(lambda: self._create(params, stream=False), self.retry)
            yield _result_from_completion(completion)
            return
        stream, first = await with_retries(lambda: self._open_stream(params), self.retry)
        events = relay(stream, first, _StreamAssembler(), openai.OpenAIError, to_llm_error)
        async with contextlib.aclosing(events) as relayed:
            async for event in relayed:
                yield event

    async def _open_stream(
        self, params: dict[str, Any]
    ) -> tuple[openai.AsyncStream[ChatCompletionChunk], ChatCompletionChunk | None]:
        # Reading the first chunk inside the retried call means early stream errors are retried too.
        return await with_first_chunk(await self._create(params, stream=True))

    async def _create(self, params: dict[str, Any], *, stream: bool) -> Any:
        """POST /chat/completions with the body as built.

        The SDK's ``create`` first "transforms" the request, walking every message and tool with typing
        introspection; on a real prompt that took more CPU than the rest of a step. Our body is plain JSON already.
        """
        body = {k: v for k, v in params.items() if k != "extra_body"} | (params.get("extra_body") or {})
        if stream:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        return await self._sdk.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            stream=stream,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body this client posts for `request` (the preview endpoint shows it as is)."""
        params: dict[str, Any] = {"model": request.model, "messages": _without_thinking_blocks(request.messages)}
        if request.tools:
            params["tools"] = request.tools
            if request.tool_choice is not None:
                params["tool_choice"] = request.tool_choice
            if request.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = request.parallel_tool_calls
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params[self._max_tokens_param] = request.max_tokens
        for name in ("frequency_penalty", "response_format", "reasoning_effort", "verbosity"):
            if (value := getattr(request, name)) is not None:
                params[name] = value
        if request.extra_body:
            params["extra_body"] = request.extra_body
        return params


def _without_thinking_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without the signed thinking blocks kept for Anthropic (not part of OpenAI's format)."""
    if not any(THINKING_BLOCKS_KEY in m for m in messages):
        return messages
    return [{k: v for k, v in m.items() if k != THINKING_BLOCKS_KEY} for m in messages]


# Endpoint types (Letta's LLMConfig.model_endpoint_type) that speak OpenAI's chat.completions API.
_ENDPOINTS = "openai deepseek groq ollama lmstudio lmstudio-chatcompletions llamacpp vllm mistral together xai zai"
OPENAI_COMPATIBLE_ENDPOINTS = frozenset(f"{_ENDPOINTS} baseten fireworks openrouter hugging-face minimax".split())
# Everything memlet can run an agent on: the OpenAI-compatible endpoints and Anthropic's messages API.
SUPPORTED_ENDPOINTS = OPENAI_COMPATIBLE_ENDPOINTS | {"anthropic"}


def check_endpoint_type(endpoint_type: str) -> None:
    """Raise 400 unless memlet has a chat client for `endpoint_type`."""
    if endpoint_type not in SUPPORTED_ENDPOINTS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Model endpoint type '{endpoint_type}' is not supported; "
            f"use anthropic or an OpenAI-compatible endpoint ({', '.join(sorted(OPENAI_COMPATIBLE_ENDPOINTS))})"
        )


def client_for(
    endpoint_type: str,
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    max_retries: int = 3,
    *,
    retry_base_delay_s: float = 0.5,
    http_client: httpx2.AsyncClient | None = None,
) -> "OpenAICompatibleClient | AnthropicClient":
    """Build the chat client for one of Letta's model endpoint types (`http_client`: e.g. a policy-guarded one)."""
    check_endpoint_type(endpoint_type)
    retry = RetryPolicy(max_retries=max_retries, base_delay_s=retry_base_delay_s)
    if endpoint_type == "anthropic":
        return AnthropicClient(
            base_url=base_url, api_key=api_key, timeout_s=timeout_s, retry=retry, http_client=http_client
        )
    # OpenAI itself rejects max_tokens for reasoning models; its successor name works for all its models.
    param = "max_completion_tokens" if endpoint_type == "openai" else "max_tokens"
    return OpenAICompatibleClient(
        base_url=base_url,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=retry,
        max_tokens_param=param,
        http_client=http_client,
        provider=endpoint_type,
    )
