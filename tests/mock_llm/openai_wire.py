"""OpenAI's chat completions wire format for the mock: a resolved reply rendered as a ``chat.completion`` or a
stream of ``chat.completion.chunk`` events, its usage, OpenAI-shaped errors and the model list."""

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from starlette.responses import JSONResponse, Response

from tests import token_budget as budget
from tests.mock_llm.logprobs import AnswerLogprobs, wanted
from tests.mock_llm.replies import Call, Reply, arguments_text
from tests.mock_llm.text import pieces

MODEL_IDS = ("gpt-4o-mini", "gpt-4o", "mock-model", "text-embedding-3-small", "text-embedding-ada-002")
CREATED = 1_700_000_000  # a fixed timestamp keeps responses byte-identical between runs


def models_response() -> Response:
    data = [{"id": m, "object": "model", "created": CREATED, "owned_by": "mock"} for m in MODEL_IDS]
    return JSONResponse({"object": "list", "data": data})


def error_response(reply: Reply) -> Response:
    kind = {429: "rate_limit_exceeded"}.get(
        reply.status, "server_error" if reply.status >= 500 else "invalid_request_error"
    )
    message = reply.message or f"Mock error {reply.status}"
    headers = {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else None
    body = {"error": {"message": message, "type": kind, "param": None, "code": reply.code}}
    return JSONResponse(body, status_code=reply.status, headers=headers)


def usage_for(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The usage the mock reports for answering `body` with `reply` (tests compare it with what memlet stored):
    real cl100k_base counts, as a provider reports them (`tests.token_budget`), unless the reply says otherwise."""
    prompt = budget.prompt_tokens(body) if reply.prompt_tokens is None else reply.prompt_tokens
    reasoning = budget.text_tokens(reply.reasoning or "")
    calls = sum(budget.text_tokens(c.name + arguments_text(c)) + 3 for c in reply.calls)
    completion = budget.text_tokens(reply.content or "") + reasoning + calls
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


class ChatAnswer:
    """Renders one resolved reply as a chat.completion or a stream of chat.completion.chunk events."""

    def __init__(self, number: int, body: dict[str, Any], reply: Reply) -> None:
        calls = tuple(replace(c, id=c.id or f"call_mock_{number}_{i}") for i, c in enumerate(reply.calls))
        self.reply = replace(reply, calls=calls)
        self.body = body
        self.id = f"chatcmpl-mock-{number}"
        self.finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        # Per-token log probabilities, only for a request that asks for them (`tests.mock_llm.logprobs`).
        self.logprobs = AnswerLogprobs(number, body) if wanted(body) else None

    def _tool_call(self, index: int, call: Call) -> dict[str, Any]:
        return {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments_text(call)},
        }

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.content, "refusal": None}
        if self.reply.calls:
            message["tool_calls"] = [self._tool_call(i, c) for i, c in enumerate(self.reply.calls)]
            for call in message["tool_calls"]:
                del call["index"]
        if self.reply.reasoning is not None:
            message["reasoning_content"] = self.reply.reasoning
        choice = {"index": 0, "message": message, "finish_reason": self.finish, "logprobs": self._whole_logprobs()}
        return self._envelope("chat.completion", choices=[choice], usage=usage_for(self.body, self.reply))

    def _whole_logprobs(self) -> dict[str, Any] | None:
        if self.logprobs is None:
            return None
        for piece in pieces(self.reply.content or ""):
            self.logprobs.token(piece)
        for call in self.reply.calls:
            for fragment in pieces(arguments_text(call), size=8):
                self.logprobs.token(fragment)
        return self.logprobs.whole()

    def _envelope(self, obj: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": CREATED,
            "model": self.body.get("model", "mock-model"),
            "system_fingerprint": "fp_mock",
            **fields,
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, token: str | None = None) -> str:
        """One chunk; `token`: the text it streams, whose logprobs it carries when the request asked."""
        logprobs = self.logprobs.token(token) if self.logprobs is not None and token is not None else None
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}
        return _sse(self._envelope("chat.completion.chunk", choices=[choice]))

    async def stream(self) -> AsyncIterator[str]:
        first_chunk = True
        async for chunk in self._chunks():
            if self.reply.chunk_gap_s and not first_chunk:
                await asyncio.sleep(self.reply.chunk_gap_s)
            first_chunk = False
            yield chunk

    async def _chunks(self) -> AsyncIterator[str]:
        reply = self.reply
        first: dict[str, Any] = {"role": "assistant"}
        if reply.content is not None or reply.calls:
            first["content"] = "" if reply.content is not None else None
        yield self._chunk(first)
        for piece in pieces(reply.reasoning or ""):
            yield self._chunk({"reasoning_content": piece})
        for n, piece in enumerate(pieces(reply.content or "")):
            if reply.break_after is not None and n >= reply.break_after:
                yield _sse({"error": {"message": "Mock stream interrupted", "type": "server_error"}})
                return
            yield self._chunk({"content": piece}, token=piece)
        for index, call in enumerate(reply.calls):
            head = self._tool_call(index, call)
            head["function"]["arguments"] = ""
            yield self._chunk({"tool_calls": [head]})
            for fragment in pieces(arguments_text(call), size=8):
                delta = {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}
                yield self._chunk(delta, token=fragment)
        yield self._chunk({}, self.finish)
        if (self.body.get("stream_options") or {}).get("include_usage"):
            yield _sse(self._envelope("chat.completion.chunk", choices=[], usage=usage_for(self.body, reply)))
        yield "data: [DONE]\n\n"


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n"
