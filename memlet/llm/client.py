"""Chat completions against any OpenAI-compatible endpoint, with bounded retries and Letta's error types.

``stream_chat`` yields ``ContentDelta`` / ``ReasoningDelta`` / ``ToolCallDelta`` events as they arrive and then
exactly one ``ChatResult``; ``chat`` drains the same generator. Retries happen here (the SDK's are off), and only
before the first chunk of a stream reaches the caller, so no caller ever sees a token twice.

Failures surface as ``memlet.errors.LLMError`` carrying Letta's ``error_type``:

    LLMError        llm_timeout (504) | llm_rate_limit (429) | llm_authentication (401) |
    │               llm_insufficient_credits (402) | llm_bad_request (400) | llm_error (500)
    └── LLMEmptyResponseError   llm_empty_response: nothing usable came back (stop reason invalid_llm_response)
    ContextWindowExceededError (BadRequestError, 400): the prompt does not fit; the loop compacts and retries
"""

import asyncio
import contextlib
import email.utils
import logging
import random
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageToolCall
from openai.types.completion_usage import CompletionUsage

from memlet.errors import BadRequestError, LLMError

log = logging.getLogger(__name__)
T = TypeVar("T")

# Local servers (vLLM, Ollama, LM Studio) ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "sk-no-key"
# OpenAI rejects longer tool_call ids; Letta truncates them on the way out and so do we.
TOOL_CALL_ID_MAX_LEN = 29

# error_type -> (HTTP status, the user-facing message Letta puts in {"error": {"message": ...}}).
_ERROR_TYPES: dict[str, tuple[int, str]] = {
    "llm_timeout": (504, "The LLM request timed out. Please try again."),
    "llm_rate_limit": (
        429,
        "Rate limit exceeded for LLM model provider. Please wait before making another request.",
    ),
    "llm_authentication": (401, "Authentication failed with the LLM model provider."),
    "llm_insufficient_credits": (402, "Insufficient credits for LLM request. Please check your account."),
    "llm_bad_request": (400, "The request to the LLM model provider was invalid."),
    "llm_error": (500, "An error occurred with the LLM request."),
    "llm_empty_response": (500, "LLM returned an empty response."),
}
_CONTEXT_OVERFLOW_HINTS = ("exceeds the context window", "maximum context length", "context_length_exceeded")
_CREDIT_HINTS = ("insufficient credits", "exceeded your current quota", "insufficient_quota", "add more credits")


class LLMEmptyResponseError(LLMError):
    """The provider answered with neither text nor tool calls, or with a body we cannot parse."""

    def __init__(self, detail: str) -> None:
        status, message = _ERROR_TYPES["llm_empty_response"]
        super().__init__(message, error_type="llm_empty_response", status_code=status, detail=detail)


class ContextWindowExceededError(BadRequestError):
    """The prompt is larger than the model's context window (Letta answers these with a plain 400)."""


# Everything ``to_llm_error`` can produce.
ProviderError = LLMError | ContextWindowExceededError


def llm_error(error_type: str, detail: str) -> LLMError:
    """An ``LLMError`` of one of Letta's ``llm_*`` types, with Letta's fixed message for that type."""
    status, message = _ERROR_TYPES[error_type]
    return LLMError(message, error_type=error_type, status_code=status, detail=detail)


def to_llm_error(exc: Exception) -> ProviderError:
    """Map an openai SDK exception to the error memlet raises (Letta's classification, our wording)."""
    text = str(exc)
    lowered = text.lower()
    if isinstance(exc, openai.APITimeoutError):
        return llm_error("llm_timeout", f"TIMEOUT: Request to the LLM provider timed out: {text}")
    if isinstance(exc, openai.APIConnectionError):
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Failed to connect to the LLM provider: {text}")
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unparsable LLM response: {text}")
    if any(hint in lowered for hint in _CONTEXT_OVERFLOW_HINTS):
        return ContextWindowExceededError(f"CONTEXT_WINDOW_EXCEEDED: The LLM context window was exceeded: {text}")
    if isinstance(exc, openai.RateLimitError):
        return llm_error("llm_rate_limit", f"RATE_LIMIT_EXCEEDED: Rate limited by the LLM provider: {text}")
    if isinstance(exc, openai.AuthenticationError):
        return llm_error("llm_authentication", f"UNAUTHENTICATED: Authentication failed: {text}")
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 402 or any(hint in lowered for hint in _CREDIT_HINTS):
            return llm_error("llm_insufficient_credits", f"PAYMENT_REQUIRED: Insufficient credits: {text}")
        if exc.status_code >= 500:
            return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: LLM provider error: {text}")
        return llm_error("llm_bad_request", f"INVALID_ARGUMENT: Bad request to the LLM provider: {text}")
    # An error event inside a stream, or anything else the SDK raises.
    return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: LLM provider error: {text}")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry 429s, 5xx and connection failures."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    # Also caps a provider's Retry-After, so one request never waits unboundedly.
    max_delay_s: float = 30.0

    def backoff(self, attempt: int) -> float:
        """Exponential delay for retry number ``attempt`` (0-based), with up to 25% jitter."""
        return min(self.max_delay_s, self.base_delay_s * 2.0**attempt * random.uniform(1.0, 1.25))


def retry_after_seconds(exc: Exception) -> float | None:
    """The wait a failed provider response asked for, if any."""
    return parse_retry_after(exc.response.headers) if isinstance(exc, openai.APIStatusError) else None


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait per ``retry-after-ms`` or ``Retry-After`` (delta-seconds or an HTTP date); None if absent."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after") or "")
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_retryable(exc: Exception) -> bool:
    """Transient failures: connection errors and timeouts, 408/409/429 (but not exhausted quota) and 5xx."""
    if isinstance(exc, openai.APIConnectionError):
        return True
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code == 429:
        return not any(hint in str(exc).lower() for hint in _CREDIT_HINTS)
    return exc.status_code in (408, 409) or exc.status_code >= 500


async def with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    """Await ``call()``, retrying transient SDK errors per ``policy``; raise the mapped memlet error at the end."""
    attempt = 0
    while True:
        try:
            return await call()
        except openai.OpenAIError as exc:
            if attempt >= policy.max_retries or not is_retryable(exc):
                raise to_llm_error(exc) from exc
            delay = retry_after_seconds(exc)
            delay = policy.backoff(attempt) if delay is None else min(delay, policy.max_delay_s)
            log.warning("LLM call failed (%s); retry %d/%d in %.2fs", exc, attempt + 1, policy.max_retries, delay)
            await asyncio.sleep(delay)
            attempt += 1


def wire_tool_call_id(tool_call_id: str) -> str:
    """The id to send to the provider: ids are stored whole but OpenAI accepts at most 29 characters."""
    return tool_call_id[:TOOL_CALL_ID_MAX_LEN]


def new_tool_call_id() -> str:
    """An OpenAI-shaped id for providers that omit one (exactly 29 characters)."""
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass(slots=True)
class ChatRequest:
    """One chat.completions call; ``messages`` and ``tools`` are already in OpenAI's wire format."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = True
    # Provider-specific fields (e.g. reasoning_effort) passed through untouched.
    extra_body: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ContentDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Reasoning text streamed by providers that send ``reasoning_content`` (DeepSeek) or ``reasoning``."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of tool call ``index``: its name when first seen, then argument fragments; ``id`` is always set."""

    index: int
    id: str
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text exactly as the model produced it (may be invalid; the loop decides)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ChatResult:
    """The assembled assistant message plus why it ended and what it cost."""

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage
    reasoning: str | None = None
    model: str | None = None
    response_id: str | None = None


ChatEvent = ContentDelta | ReasoningDelta | ToolCallDelta | ChatResult


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
    ) -> None:
        self.retry = retry
        self._max_tokens_param = max_tokens_param
        self._sdk = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY, timeout=timeout_s, max_retries=0
        )

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        """The underlying SDK client (the embedding client shares it)."""
        return self._sdk

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._sdk.close()

    async def chat(self, request: ChatRequest) -> ChatResult:
        """Run the request (streamed or not, per ``request.stream``) and return only the final result."""
        async with contextlib.aclosing(self.stream_chat(request)) as events:
            async for event in events:
                if isinstance(event, ChatResult):
                    return event
        raise LLMEmptyResponseError("INTERNAL_SERVER_ERROR: LLM stream ended without a result")

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """Yield deltas, then one ``ChatResult``; with ``stream=False`` only the result is yielded."""
        params = self._params(request)
        if not request.stream:
            completion = await with_retries(lambda: self._create(params, stream=False), self.retry)
            yield _result_from_completion(completion)
            return
        stream, first = await with_retries(lambda: self._open_stream(params), self.retry)
        assembler = _StreamAssembler()
        try:
            chunk = first
            while chunk is not None:
                for event in assembler.feed(chunk):
                    yield event
                chunk = await anext(stream, None)
        except openai.OpenAIError as exc:
            # Tokens already reached the caller: retrying now would duplicate them.
            raise to_llm_error(exc) from exc
        finally:
            await stream.close()
        yield assembler.result()

    async def _open_stream(
        self, params: dict[str, Any]
    ) -> tuple[openai.AsyncStream[ChatCompletionChunk], ChatCompletionChunk | None]:
        # Reading the first chunk inside the retried call means early stream errors are retried too.
        stream = await self._create(params, stream=True)
        try:
            return stream, await anext(stream, None)
        except BaseException:
            await stream.close()
            raise

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

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": request.model, "messages": request.messages}
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
        if request.extra_body:
            params["extra_body"] = request.extra_body
        return params


# Endpoint types (Letta's LLMConfig.model_endpoint_type) that speak OpenAI's chat.completions API.
_ENDPOINTS = "openai deepseek groq ollama lmstudio lmstudio-chatcompletions llamacpp vllm mistral together xai zai"
OPENAI_COMPATIBLE_ENDPOINTS = frozenset(f"{_ENDPOINTS} baseten fireworks openrouter hugging-face minimax".split())


def client_for(
    endpoint_type: str, base_url: str, api_key: str | None, timeout_s: float, max_retries: int = 3
) -> OpenAICompatibleClient:
    """Build the chat client for one of Letta's model endpoint types."""
    if endpoint_type not in OPENAI_COMPATIBLE_ENDPOINTS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Model endpoint type '{endpoint_type}' is not supported; "
            f"use an OpenAI-compatible endpoint ({', '.join(sorted(OPENAI_COMPATIBLE_ENDPOINTS))})"
        )
    # OpenAI itself rejects max_tokens for reasoning models; its successor name works for all its models.
    param = "max_completion_tokens" if endpoint_type == "openai" else "max_tokens"
    retry = RetryPolicy(max_retries=max_retries)
    return OpenAICompatibleClient(
        base_url=base_url, api_key=api_key, timeout_s=timeout_s, retry=retry, max_tokens_param=param
    )
