"""Anthropic's messages API for the mock LLM (`POST /v1/messages`, blocking or SSE, and the Anthropic-shaped
`GET /v1/models`), answering the same scripted ``Reply`` queue as the chat completions route.

A reply renders as Anthropic content blocks: ``reasoning`` as a ``thinking`` block signed ``mock-signature-<n>``
(or ``Reply.signature``), ``redacted`` as a ``redacted_thinking`` block, ``content`` as a ``text`` block, each call
as a ``tool_use`` block (ids ``toolu_mock_<n>_<i>``). Streams use Anthropic's event types (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``, ``ping``, ``error``).

Usage counts ~4 characters a token over system, messages and tools. Prompt caching is simulated: a system prompt
marked ``cache_control`` is reported as ``cache_creation_input_tokens`` the first time it is seen and as
``cache_read_input_tokens`` afterwards (both left out of ``input_tokens``, as Anthropic does); unmarked, it is plain
input. Errors use Anthropic's body (``{"type": "error", "error": {"type": ..., "message": ...}}``); status 529 is
``overloaded_error``.
"""

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from starlette.responses import JSONResponse, Response

from tests.mock_llm.replies import Reply, arguments_text
from tests.mock_llm.text import pieces, rough_tokens

ANTHROPIC_MODEL_IDS = ("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-3-5-haiku-20241022")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_STOP_REASONS = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use", "content_filter": "refusal"}


def models_response() -> Response:
    data = [
        {"id": m, "type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in ANTHROPIC_MODEL_IDS
    ]
    return JSONResponse({"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]})


def error_response(reply: Reply) -> Response:
    kind = _ERROR_TYPES.get(reply.status, "api_error")
    headers = {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else None
    body = {"type": "error", "error": {"type": kind, "message": reply.message or f"Mock error {reply.status}"}}
    return JSONResponse(body, status_code=reply.status, headers=headers)


def _system_tokens(body: dict[str, Any]) -> tuple[int, bool]:
    system = body.get("system")
    if isinstance(system, str):
        return rough_tokens(system), False
    blocks = system or []
    return rough_tokens(json.dumps([b.get("text") for b in blocks])), any("cache_control" in b for b in blocks)


def usage_for(body: dict[str, Any], reply: Reply, cached: set[str]) -> dict[str, int]:
    """The usage the mock reports for answering `body` with `reply`; `cached` holds the system prompts seen."""
    system, marked = _system_tokens(body)
    rest = rough_tokens(json.dumps(body.get("messages", []))) + rough_tokens(json.dumps(body.get("tools") or []))
    read = written = 0
    if marked:
        key = json.dumps(body.get("system"), sort_keys=True)
        if key in cached:
            read = system
        else:
            written = system
            cached.add(key)
    else:
        rest += system
    calls = sum(rough_tokens(c.name) + rough_tokens(arguments_text(c)) for c in reply.calls)
    output = rough_tokens(reply.content) + rough_tokens(reply.reasoning) + calls
    return {
        "input_tokens": rest,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
    }


class AnthropicAnswer:
    """One resolved reply rendered as an Anthropic message or as its event stream."""

    def __init__(self, number: int, body: dict[str, Any], reply: Reply, cached: set[str]) -> None:
        calls = tuple(replace(c, id=c.id or f"toolu_mock_{number}_{i}") for i, c in enumerate(reply.calls))
        self.reply = replace(reply, calls=calls)
        self.body = body
        self.id = f"msg_mock_{number}"
        self.signature = reply.signature or f"mock-signature-{number}"
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        self.stop_reason = _STOP_REASONS.get(finish, finish)
        self.usage = usage_for(body, self.reply, cached)

    def blocks(self) -> list[dict[str, Any]]:
        reply = self.reply
        out: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            out.append({"type": "thinking", "thinking": reply.reasoning, "signature": self.signature})
        if reply.redacted is not None:
            out.append({"type": "redacted_thinking", "data": reply.redacted})
        if reply.content is not None:
            out.append({"type": "text", "text": reply.content})
        for call in reply.calls:
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            out.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
        return out

    def message(self, content: list[dict[str, Any]], stop_reason: str | None, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.reply.model or self.body.get("model", "claude-mock"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def response(self) -> dict[str, Any]:
        return self.message(self.blocks(), self.stop_reason, self.usage)

    async def stream(self) -> AsyncIterator[str]:
        start_usage = {**self.usage, "output_tokens": 1}
        yield _event("message_start", {"type": "message_start", "message": self.message([], None, start_usage)})
        yield _event("ping", {"type": "ping"})
        for index, block in enumerate(self.blocks()):
            for event in self._block_events(index, block):
                if event is None:
                    error = {"type": "overloaded_error", "message": "Mock stream interrupted"}
                    yield _event("error", {"type": "error", "error": error})
                    return
                yield event
            yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        delta = {"stop_reason": self.stop_reason, "stop_sequence": None}
        yield _event("message_delta", {"type": "message_delta", "delta": delta, "usage": self.usage})
        yield _event("message_stop", {"type": "message_stop"})

    def _block_events(self, index: int, block: dict[str, Any]) -> list[str | None]:
        kind = block["type"]
        empty: dict[str, dict[str, Any]] = {
            "thinking": {"thinking": "", "signature": ""},
            "text": {"text": ""},
            "tool_use": {"input": {}},
        }
        head = {**block, **empty.get(kind, {})}
        events: list[str | None] = [_event("content_block_start", _start(index, head))]
        if kind == "thinking":
            events += [_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces(block["thinking"])]
            events.append(_delta(index, {"type": "signature_delta", "signature": block["signature"]}))
        elif kind == "text":
            for n, piece in enumerate(pieces(block["text"])):
                if self.reply.break_after is not None and n >= self.reply.break_after:
                    events.append(None)
                    break
                events.append(_delta(index, {"type": "text_delta", "text": piece}))
        elif kind == "tool_use":
            raw = json.dumps(block["input"])
            events += [_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces(raw, size=8)]
        return events


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> str:
    return _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _event(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
