"""OpenAI's chat completion answers, as decoded JSON (plain dicts), read into memlet's events and ``ChatResult``.

``StreamAssembler`` turns ``chat.completion.chunk`` objects into ``ContentDelta`` / ``ReasoningDelta`` /
``ToolCallDelta`` events and assembles the final result; ``result_from_completion`` reads a non-streamed
``chat.completion``. Reasoning comes as ``reasoning_content`` (DeepSeek, vLLM) or ``reasoning`` (OpenRouter);
cached prompt tokens as ``prompt_tokens_details.cached_tokens`` or DeepSeek's ``prompt_cache_hit_tokens``.
"""

import uuid
from dataclasses import dataclass, field
from typing import Any

from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.logprobs import Logprobs
from memlet.llm.types import ChatEvent, ChatResult, ContentDelta, ReasoningDelta, ToolCall, ToolCallDelta, Usage


def new_tool_call_id() -> str:
    """An OpenAI-shaped id for providers that omit one (exactly 29 characters)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _reported(value: object) -> int | None:
    return value if isinstance(value, int) else None


def usage_of(usage: object) -> Usage:
    """An OpenAI ``usage`` object as memlet's ``Usage`` (zero tokens when absent; details the provider left out
    stay None)."""
    if not isinstance(usage, dict):
        return Usage()
    details = _dict(usage.get("prompt_tokens_details")).get("cached_tokens")
    hits = usage.get("prompt_cache_hit_tokens")
    cached = details or hits or (details if details is not None else hits)  # a reported 0 stays 0
    return Usage(
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        total_tokens=_int(usage.get("total_tokens")),
        cached_tokens=_reported(cached),
        reasoning_tokens=_reported(_dict(usage.get("completion_tokens_details")).get("reasoning_tokens")),
    )


def _reasoning_of(message: dict[str, Any]) -> str | None:
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return reasoning if isinstance(reasoning, str) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass
class _PartialCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Turns chat.completion.chunk objects into events and remembers enough to build the final result.

    Without `deltas` (a caller that wants the result only) `feed` returns no events: nothing is built or relayed
    per chunk.
    """

    def __init__(self, *, deltas: bool = True) -> None:
        self.deltas = deltas
        self.content: list[str] | None = None
        self.reasoning: list[str] = []
        self.calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.usage: object = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.logprobs: Logprobs | None = None  # only when a chunk carried some (the request asked for them)

    def feed(self, chunk: dict[str, Any]) -> list[ChatEvent]:
        self.model = chunk.get("model") or self.model
        self.response_id = chunk.get("id") or self.response_id
        self.usage = chunk.get("usage") or self.usage
        events: list[ChatEvent] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            if logprobs := choice.get("logprobs"):
                self._feed_logprobs(logprobs)
            delta = _dict(choice.get("delta"))
            if reasoning := _reasoning_of(delta):
                self.reasoning.append(reasoning)
                if self.deltas:
                    events.append(ReasoningDelta(reasoning))
            content = _text(delta.get("content"))
            if content is not None:
                if self.content is None:
                    self.content = []
                self.content.append(content)
                if content and self.deltas:
                    events.append(ContentDelta(content))
            for position, tool_call in enumerate(delta.get("tool_calls") or ()):
                if isinstance(tool_call, dict):
                    events.extend(self._feed_tool_call(position, tool_call))
        return events

    def _feed_logprobs(self, value: object) -> None:
        if isinstance(value, dict):
            if self.logprobs is None:
                self.logprobs = Logprobs()
            self.logprobs.feed(value)

    def _feed_tool_call(self, position: int, tool_call: dict[str, Any]) -> list[ChatEvent]:
        index = tool_call.get("index")
        index = index if isinstance(index, int) else position
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = _PartialCall(id=_text(tool_call.get("id")) or new_tool_call_id())
        function = _dict(tool_call.get("function"))
        name = _text(function.get("name"))
        fragment = _text(function.get("arguments")) or ""
        # Some providers repeat the name on every chunk; only the first one is news.
        new_name = name if name and not call.name else None
        if new_name:
            call.name = new_name
        call.arguments.append(fragment)
        if not self.deltas or (new_name is None and not fragment):
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
        usage = self.usage if isinstance(self.usage, dict) else None
        return ChatResult(
            content,
            calls,
            self.finish_reason,
            usage_of(usage),
            reasoning,
            self.model,
            self.response_id,
            logprobs=None if self.logprobs is None else self.logprobs.result(),
            raw_usage=usage,
        )


def result_from_completion(completion: object) -> ChatResult:
    """A decoded ``chat.completion`` body as the ``ChatResult``; an unusable or empty one raises."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(completion, dict) or not isinstance(choice, dict):
        raise LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unusable LLM response: {str(completion)[:500]}")
    message = _dict(choice.get("message"))
    content = _text(message.get("content"))
    calls = [
        ToolCall(
            _text(tc.get("id")) or new_tool_call_id(),
            _text(function.get("name")) or "",
            _text(function.get("arguments")) or "",
        )
        for tc in message.get("tool_calls") or ()
        # custom (non-function) tool calls are not ours
        if isinstance(tc, dict) and tc.get("type", "function") == "function"
        for function in (_dict(tc.get("function")),)
    ]
    if content is None and not calls:
        raise LLMEmptyResponseError(
            f"INTERNAL_SERVER_ERROR: LLM provider returned empty content in response "
            f"(ID: {completion.get('id')}, model: {completion.get('model')}, "
            f"finish_reason: {choice.get('finish_reason')})"
        )
    usage = completion.get("usage")
    return ChatResult(
        content,
        calls,
        choice.get("finish_reason"),
        usage_of(usage),
        _reasoning_of(message),
        completion.get("model"),
        completion.get("id"),
        logprobs=Logprobs.of_choice(choice.get("logprobs")),
        raw_usage=usage if isinstance(usage, dict) else None,
    )
