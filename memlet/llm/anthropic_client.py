"""``LLMClient`` over Anthropic's messages API (the official ``anthropic`` SDK), speaking the loop's chat format.

Requests are converted by ``memlet.llm.anthropic_format``; answers come back as the same events the
OpenAI-compatible client yields: ``ReasoningDelta`` for thinking, ``ContentDelta`` for text, ``ToolCallDelta`` for
``tool_use`` input, then one ``ChatResult`` that also carries the thinking blocks with their signatures (the loop
stores them on the assistant row, and they are sent back on the next request). Usage: Anthropic's
``input_tokens`` leave out cached tokens, so the prompt is input + cache reads + cache writes.

Retries follow the same policy as the OpenAI-compatible client and happen only before the first event reaches
the caller. The SDK (~40 MB resident) and its error mapping are imported when the first client is built, so a
server that never runs an Anthropic model never loads them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memlet.llm.anthropic_format import AnthropicOptions, prefilled, request_body
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.first_chunk import with_first_chunk
from memlet.llm.retry import RetryPolicy, with_retries
from memlet.llm.stream_relay import final_result, metered, relay
from memlet.llm.thinking_tags import TagStripper, strip_tags
from memlet.llm.types import (
    ChatEvent,
    ChatRequest,
    ChatResult,
    ContentDelta,
    HiddenReasoningDelta,
    ReasoningDelta,
    ThinkingBlock,
    ToolCall,
    ToolCallDelta,
    Usage,
)

if TYPE_CHECKING:
    import anthropic
    import httpx2
    from anthropic.types import Message, RawMessageStreamEvent

    from memlet.llm.retry import SDKErrors

# Anthropic's stop_reason as the OpenAI finish_reason the loop reads.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
PLACEHOLDER_API_KEY = "sk-ant-no-key"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"


def sdk_base_url(base_url: str) -> str:
    """The SDK adds ``/v1/messages`` itself; llm_configs name the endpoint with ``/v1`` as Letta's do."""
    return base_url.rstrip("/").removesuffix("/v1")


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def usage_of(usage: Any, output_tokens: int | None = None) -> Usage:
    """Anthropic usage as memlet's: prompt = input + cache reads + cache writes. No cache read or write reads as
    not reported (None), as Letta's Anthropic stream reads it; Anthropic reports no reasoning tokens."""
    if usage is None:
        return Usage()
    read = _get(usage, "cache_read_input_tokens") or 0
    written = _get(usage, "cache_creation_input_tokens") or 0
    prompt = (_get(usage, "input_tokens") or 0) + read + written
    completion = output_tokens if output_tokens is not None else (_get(usage, "output_tokens") or 0)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cached_tokens=read or None,
        cache_write_tokens=written or None,
    )


@dataclass
class _Block:
    type: str
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    data: str | None = None
    id: str = ""
    name: str = ""
    tool_index: int = 0


class _Assembler:
    """Turns raw stream events into chat events and remembers enough to build the final result (`strip_tags`:
    the reply was prefilled with `<thinking>`, whose tags its text is cleaned of)."""

    def __init__(self, strip_tags: bool = False) -> None:
        self.strip_tags = strip_tags
        self.strippers: dict[int, TagStripper] = {}
        self.blocks: dict[int, _Block] = {}
        self.tool_count = 0
        self.stop_reason: str | None = None
        self.usage: Any = None
        self.output_tokens: int | None = None
        self.model: str | None = None
        self.response_id: str | None = None

    def feed(self, event: Any) -> list[ChatEvent]:
        kind = event.type
        if kind == "message_start":
            self.model, self.response_id, self.usage = event.message.model, event.message.id, event.message.usage
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            if event.usage is not None:
                self.output_tokens = event.usage.output_tokens
                self.usage = _merged_usage(self.usage, event.usage)
        elif kind == "content_block_start":
            return self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            return self._flush(event.index)
        return []

    def _text(self, index: int, text: str) -> list[ChatEvent]:
        """A text fragment of block `index`, kept and passed on (cleaned of the tags when prefilled)."""
        if self.strip_tags:
            text = self.strippers.setdefault(index, TagStripper()).feed(text)
        if not text:
            return []
        self.blocks[index].text.append(text)
        return [ContentDelta(text)]

    def _flush(self, index: int) -> list[ChatEvent]:
        stripper = self.strippers.pop(index, None)
        held = stripper.flush() if stripper is not None else ""
        if not held:
            return []
        self.blocks[index].text.append(held)
        return [ContentDelta(held)]

    def _start(self, index: int, block: Any) -> list[ChatEvent]:
        if block.type == "tool_use":
            entry = _Block("tool_use", id=block.id, name=block.name, tool_index=self.tool_count)
            self.tool_count += 1
            self.blocks[index] = entry
            return [ToolCallDelta(index=entry.tool_index, id=block.id, name=block.name)]
        if block.type == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking", data=block.data)
            return [HiddenReasoningDelta(block.data)]  # shown when the block starts, as Letta streams it
        entry = self.blocks[index] = _Block(block.type)
        initial = getattr(block, "text", None) or getattr(block, "thinking", None)
        if initial and block.type == "text":
            return self._text(index, initial)
        if initial:
            entry.text.append(initial)
            return [ContentDelta(initial) if block.type == "text" else ReasoningDelta(initial, thinking_block=True)]
        return []

    def _delta(self, index: int, delta: Any) -> list[ChatEvent]:
        entry = self.blocks.get(index)
        if entry is None:
            return []
        if delta.type == "text_delta":
            return self._text(index, delta.text) if delta.text else []
        if delta.type == "thinking_delta":
            entry.text.append(delta.thinking)
            return [ReasoningDelta(delta.thinking, thinking_block=True)] if delta.thinking else []
        if delta.type == "signature_delta":
            entry.signature = (entry.signature or "") + delta.signature
            return [ReasoningDelta("", signature=delta.signature, thinking_block=True)]
        elif delta.type == "input_json_delta" and delta.partial_json:
            entry.text.append(delta.partial_json)
            # Every piece names its tool, as Letta's Anthropic stream labels each argument fragment.
            return [ToolCallDelta(index=entry.tool_index, id=entry.id, name=entry.name, arguments=delta.partial_json)]
        return []

    def result(self) -> ChatResult:
        for index in list(self.strippers):  # a stream cut before its block ended: what was held back is kept
            self._flush(index)
        blocks = [self.blocks[i] for i in sorted(self.blocks)]
        texts = ["".join(b.text) for b in blocks if b.type == "text"]
        calls = [ToolCall(b.id, b.name, "".join(b.text) or "{}") for b in blocks if b.type == "tool_use"]
        thinking = tuple(_thinking_block(b) for b in blocks if b.type in ("thinking", "redacted_thinking"))
        return _result(texts, calls, thinking, self.stop_reason, usage_of(self.usage, self.output_tokens), self)


def _merged_usage(start: Any, final: Any) -> dict[str, Any]:
    """message_start carries the input counts, message_delta the final output (and, lately, input) counts."""
    merged = {k: _get(start, k) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
    for key in (*merged, "output_tokens"):
        value = _get(final, key)
        if value is not None:
            merged[key] = value
    return merged


def _thinking_block(block: _Block) -> ThinkingBlock:
    if block.type == "redacted_thinking":
        return ThinkingBlock(redacted=block.data or "")
    return ThinkingBlock(text="".join(block.text), signature=block.signature)


def _result(
    texts: list[str],
    calls: list[ToolCall],
    thinking: tuple[ThinkingBlock, ...],
    stop_reason: str | None,
    usage: Usage,
    source: Any,
) -> ChatResult:
    content = "".join(texts) if texts else None
    reasoning = "".join(t.text for t in thinking) or None
    if content is None and not calls and reasoning is None:
        raise LLMEmptyResponseError(
            f"INTERNAL_SERVER_ERROR: LLM provider streamed no content and no tool calls "
            f"(ID: {source.response_id}, model: {source.model}, finish_reason: {stop_reason})"
        )
    finish = FINISH_REASONS.get(stop_reason or "", stop_reason)
    raw = _raw_usage(getattr(source, "usage", None))
    return ChatResult(
        content, calls, finish, usage, reasoning, source.model, source.response_id, thinking, raw_usage=raw
    )


def _raw_usage(usage: Any) -> dict[str, Any] | None:
    """Anthropic's usage object as it reported it, without its empty fields (for the step's provider trace)."""
    if isinstance(usage, dict):
        return {k: v for k, v in usage.items() if v is not None}
    dump = getattr(usage, "model_dump", None)
    return dump(exclude_none=True) if dump is not None else None


def _result_from_message(message: Message, prefilled: bool = False) -> ChatResult:
    texts, calls, thinking = [], [], []
    for block in message.content:
        if block.type == "text":
            texts.append(strip_tags(block.text) if prefilled else block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, _json(block.input)))
        elif block.type == "thinking":
            thinking.append(ThinkingBlock(text=block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            thinking.append(ThinkingBlock(redacted=block.data))
    source = _Source(message.model, message.id, message.usage)
    return _result(texts, calls, tuple(thinking), message.stop_reason, usage_of(message.usage), source)


@dataclass(frozen=True)
class _Source:
    model: str | None
    response_id: str | None
    usage: Any = None


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class AnthropicClient:
    """``LLMClient`` over ``anthropic.AsyncAnthropic``. ``bind(options)`` gives a per-agent view of one pooled
    client (thinking and effort come from the agent's llm_config; the connection pool is shared)."""

    def __init__(
        self,
        *,
        base_url: str = "",
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        http_client: httpx2.AsyncClient | None = None,
        options: AnthropicOptions = AnthropicOptions(),
        sdk: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self.retry = retry
        self.provider = "anthropic"
        self.options = options
        self._errors = _sdk_errors()
        self._sdk = sdk or _new_sdk(base_url, api_key, timeout_s, http_client)

    def bind(self, options: AnthropicOptions) -> AnthropicClient:
        """The same connection, with one agent's request options."""
        return AnthropicClient(retry=self.retry, options=options, sdk=self._sdk)

    async def aclose(self) -> None:
        await self._sdk.close()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body this client posts for `request` (the preview endpoint shows it as is)."""
        return request_body(request, self.options)

    async def chat(self, request: ChatRequest) -> ChatResult:
        return await final_result(metered(self.provider, self._stream_chat(request, betas=self.options.betas)))

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[ChatEvent, None]:
        """Yield deltas, then one ``ChatResult``; with ``stream=False`` only the result is yielded. A caller that
        relays the deltas asks, as Letta's streaming path does, for fine-grained tool streaming: tool arguments
        (and the thoughts and messages inside them) then arrive as the model writes them, not in bursts. MiniMax is
        sent no beta header at all, as Letta sends it none."""
        fine_grained = request.stream and not self.options.minimax
        betas = (FINE_GRAINED_TOOL_STREAMING_BETA, *self.options.betas) if fine_grained else self.options.betas
        return metered(self.provider, self._stream_chat(request, betas=betas))

    async def _stream_chat(self, request: ChatRequest, *, betas: tuple[str, ...]) -> AsyncGenerator[ChatEvent, None]:
        body = self.request_body(request)
        request.sent = {**body, "stream": True} if request.stream else body  # as `_create` posts it
        thinking_prefill = prefilled(request, self.options)
        if not request.stream:
            message = await with_retries(lambda: self._create(body, betas, stream=False), self.retry, self._errors)
            yield _result_from_message(message, thinking_prefill)
            return
        stream, first = await with_retries(lambda: self._open_stream(body, betas), self.retry, self._errors)
        events = relay(stream, first, _Assembler(thinking_prefill), self._errors.base, self._errors.convert)
        async with contextlib.aclosing(events) as relayed:
            async for event in relayed:
                yield event

    async def _open_stream(
        self, body: dict[str, Any], betas: tuple[str, ...]
    ) -> tuple[anthropic.AsyncStream[RawMessageStreamEvent], RawMessageStreamEvent | None]:
        # Reading the first event inside the retried call means early stream errors are retried too.
        return await with_first_chunk(await self._create(body, betas, stream=True))

    async def _create(self, body: dict[str, Any], betas: tuple[str, ...], *, stream: bool) -> Any:
        """POST /v1/messages with the body as built (plain JSON already; the SDK's transform step is skipped)."""
        from anthropic import AsyncStream
        from anthropic.types import Message, RawMessageStreamEvent

        headers = {"anthropic-beta": ",".join(betas)} if betas else {}
        return await self._sdk.post(
            "/v1/messages",
            body={**body, "stream": True} if stream else body,
            cast_to=Message,
            options={"headers": headers},
            stream=stream,
            stream_cls=AsyncStream[RawMessageStreamEvent],
        )


def _sdk_errors() -> SDKErrors:
    """How the anthropic SDK's exceptions read (imports the SDK on first use)."""
    from memlet.llm.anthropic_errors import ANTHROPIC_ERRORS

    return ANTHROPIC_ERRORS


def _new_sdk(
    base_url: str, api_key: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
) -> anthropic.AsyncAnthropic:
    """The SDK client (its own retries off: ``with_retries`` does them); imports the SDK on first use."""
    import anthropic

    return anthropic.AsyncAnthropic(
        base_url=sdk_base_url(base_url),
        api_key=api_key or PLACEHOLDER_API_KEY,
        timeout=timeout_s,
        max_retries=0,
        http_client=http_client,
    )
