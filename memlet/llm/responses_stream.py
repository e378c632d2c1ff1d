"""OpenAI's Responses API answers (decoded JSON events, or a whole ``response`` object) read into memlet's events
and ``ChatResult``, as Letta 0.16.8's Responses streaming interface reads them.

While the stream runs, reasoning summary deltas become ``ReasoningDelta`` (a later summary part of the same item
starts after a blank line, as the stored reasoning joins them), output text deltas ``ContentDelta``, and each
function call ``ToolCallDelta`` (its call id and name when the item is added, then its argument fragments). The
final ``response`` (``response.completed``, or ``response.incomplete`` when cut short) gives the result: its
reasoning items (kept whole, with their encrypted content, to be stored and sent back), its text, its calls, and
usage (input tokens as the prompt, output tokens as the completion, cached input and reasoning tokens from their
details). A ``response.failed`` or ``error`` event ends the call with Letta's ``llm_error``.
"""

from dataclasses import dataclass, field
from typing import Any

from memlet.llm.errors import LLMEmptyResponseError, llm_error
from memlet.llm.openai_result import new_tool_call_id
from memlet.llm.types import (
    ChatEvent,
    ChatResult,
    ContentDelta,
    ReasoningDelta,
    SummarizedReasoning,
    ToolCall,
    ToolCallDelta,
    Usage,
)

SUMMARY_SEPARATOR = "\n\n"  # between the summary parts of one reasoning item, as Letta joins them
# Why a response stopped short, as the loop's finish_reason (Letta's mapping); any other reason is kept as it is.
_INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def usage_of(usage: object) -> Usage:
    """A Responses ``usage`` object as memlet's ``Usage`` (the total is input + output, as Letta adds them)."""
    data = _dict(usage)
    prompt, completion = _int(data.get("input_tokens")), _int(data.get("output_tokens"))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cached_tokens=_int(_dict(data.get("input_tokens_details")).get("cached_tokens")),
        reasoning_tokens=_int(_dict(data.get("output_tokens_details")).get("reasoning_tokens")),
    )


@dataclass
class _Call:
    index: int
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class ResponsesAssembler:
    """Turns Responses stream events into events and keeps the final response (`result()` reads it).

    Without `deltas` (a caller that wants the result only) `feed` returns no events.
    """

    def __init__(self, *, deltas: bool = True) -> None:
        self.deltas = deltas
        self.response: dict[str, Any] | None = None
        # What was streamed, for a stream that ends without its final response.
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}  # by output_index
        self._calls_by_item: dict[str, _Call] = {}

    def feed(self, event: dict[str, Any]) -> list[ChatEvent]:
        kind = event.get("type")
        if kind == "response.output_item.added":
            return self._item_added(event)
        if kind == "response.reasoning_summary_part.added":
            text = _text(_dict(event.get("part")).get("text"))
            if _int(event.get("summary_index")) > 0:
                text = SUMMARY_SEPARATOR + text
            return self._reasoning(text)
        if kind == "response.reasoning_summary_text.delta":
            return self._reasoning(_text(event.get("delta")))
        if kind == "response.output_text.delta":
            if not (delta := _text(event.get("delta"))):
                return []
            self.text.append(delta)
            return [ContentDelta(delta)] if self.deltas else []
        if kind == "response.function_call_arguments.delta":
            return self._arguments(event)
        if kind in ("response.completed", "response.incomplete"):
            self.response = _dict(event.get("response"))
        elif kind == "response.failed":
            error = _dict(_dict(event.get("response")).get("error"))
            raise llm_error("llm_error", f"INTERNAL_SERVER_ERROR: OpenAI Responses API failed: {error or 'unknown'}")
        elif kind == "error":
            detail = event.get("message") or event
            raise llm_error("llm_error", f"INTERNAL_SERVER_ERROR: OpenAI Responses API error: {detail}")
        return []

    def _reasoning(self, text: str) -> list[ChatEvent]:
        if not text:
            return []
        self.reasoning.append(text)
        return [ReasoningDelta(text)] if self.deltas else []

    def _item_added(self, event: dict[str, Any]) -> list[ChatEvent]:
        item = _dict(event.get("item"))
        kind = item.get("type")
        if kind == "reasoning":
            return self._reasoning("".join(_text(_dict(s).get("text")) for s in item.get("summary") or []))
        if kind == "message":
            texts = [_text(_dict(p).get("text")) for p in item.get("content") or []]
            self.text.extend(texts)
            return [ContentDelta(t) for t in texts if t] if self.deltas else []
        if kind != "function_call":
            return []
        position = event.get("output_index")
        call = _Call(len(self.calls), _text(item.get("call_id")) or new_tool_call_id(), _text(item.get("name")))
        self.calls[position if isinstance(position, int) else -1 - call.index] = call
        if isinstance(item.get("id"), str):
            self._calls_by_item[item["id"]] = call
        arguments = _text(item.get("arguments"))
        call.arguments.append(arguments)
        return [ToolCallDelta(call.index, call.id, call.name or None, arguments)] if self.deltas else []

    def _arguments(self, event: dict[str, Any]) -> list[ChatEvent]:
        position = event.get("output_index")
        call = self.calls.get(position) if isinstance(position, int) else None
        if call is None:
            call = self._calls_by_item.get(_text(event.get("item_id")))
        delta = _text(event.get("delta"))
        if call is None or not delta:
            return []  # a fragment of no call announced: nothing to attach it to (Letta drops it too)
        call.arguments.append(delta)
        return [ToolCallDelta(call.index, call.id, None, delta)] if self.deltas else []

    def result(self) -> ChatResult:
        if self.response is not None:
            return result_from_response(self.response)
        # The stream ended without its final response: what was streamed.
        content = "".join(self.text) or None
        calls = [ToolCall(c.id, c.name, "".join(c.arguments)) for c in self.calls.values()]
        reasoning = "".join(self.reasoning) or None
        if content is None and not calls:
            raise LLMEmptyResponseError(
                "INTERNAL_SERVER_ERROR: LLM provider streamed no content and no tool calls "
                "(the Responses stream ended without its final response)"
            )
        return ChatResult(content, calls, None, Usage(), reasoning)


def result_from_response(response: object) -> ChatResult:
    """A ``response`` object (the final event's, or a non-streamed body) as the ``ChatResult``."""
    data = _dict(response)
    if data.get("object", "response") != "response" or not isinstance(data.get("output"), list):
        raise LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unusable LLM response: {str(response)[:500]}")
    summarized: list[SummarizedReasoning] = []
    texts: list[str] | None = None
    calls: list[ToolCall] = []
    for item in map(_dict, data["output"]):
        kind = item.get("type")
        if kind == "reasoning":
            summary = tuple(_text(_dict(s).get("text")) for s in item.get("summary") or [])
            encrypted = item.get("encrypted_content")
            summarized.append(SummarizedReasoning(_text(item.get("id")), summary, _text(encrypted) or None))
        elif kind == "message":
            parts = [_dict(p) for p in item.get("content") or []]
            texts = (texts or []) + [_text(p.get("text")) for p in parts if p.get("type") == "output_text"]
        elif kind == "function_call" and item.get("call_id") and item.get("name") is not None:
            calls.append(ToolCall(_text(item["call_id"]), _text(item["name"]), _text(item.get("arguments"))))
    content = "".join(texts) if texts else None
    joined = SUMMARY_SEPARATOR.join(t for r in summarized for t in r.summary if t) or None
    if content is None and not calls and joined is None:
        raise LLMEmptyResponseError(
            f"INTERNAL_SERVER_ERROR: LLM provider streamed no content and no tool calls "
            f"(ID: {data.get('id')}, model: {data.get('model')}, status: {data.get('status')})"
        )
    return ChatResult(
        content,
        calls,
        finish_reason(data),
        usage_of(data.get("usage")),
        joined,
        _text(data.get("model")) or None,
        _text(data.get("id")) or None,
        summarized=tuple(summarized),
        raw_usage=usage if isinstance(usage := data.get("usage"), dict) else None,
        raw_response=data,
    )


def finish_reason(response: dict[str, Any]) -> str | None:
    """Letta's finish_reason for a response: why it stopped short, else "stop" once completed."""
    reason = _dict(response.get("incomplete_details")).get("reason")
    if isinstance(reason, str):
        return _INCOMPLETE_REASONS.get(reason, reason)
    return "stop" if response.get("status") == "completed" else None
