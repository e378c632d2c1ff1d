"""OpenAI's Responses API for the mock LLM (``POST /v1/responses``, blocking or SSE), answering the same scripted
``Reply`` queue as the chat completions route.

A reply renders as Responses output items: ``reasoning`` as a ``reasoning`` item (id ``rs_mock_<n>``) whose summary
parts are the reasoning's paragraphs (split at blank lines) and whose ``encrypted_content`` is
``mock-encrypted-<n>`` (or ``Reply.signature``), ``content`` as an assistant ``message`` item with one
``output_text`` part, each call as a ``function_call`` item (call ids ``call_mock_<n>_<i>``). Streams send
OpenAI's event types (``response.created``, ``response.output_item.added``, ``...summary_text.delta``,
``...output_text.delta``, ``...function_call_arguments.delta``, ``response.completed``, each with its
``sequence_number``); a reply with ``finish_reason="length"`` ends ``response.incomplete`` (max_output_tokens),
and ``break_after`` sends an ``error`` event after that many text deltas. Usage counts ~4 characters a token over
the input and tools (``reply.prompt_tokens`` overrides it); reasoning tokens are the reasoning's.
"""

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from tests.mock_llm.openai_wire import CREATED
from tests.mock_llm.replies import Call, Reply, arguments_text
from tests.mock_llm.text import pieces, rough_tokens


def summary_parts(reasoning: str) -> list[str]:
    """The summary parts a reply's reasoning is sent as: its paragraphs."""
    return reasoning.split("\n\n")


class ResponsesAnswer:
    """Renders one resolved reply as a ``response`` object or a stream of Responses events."""

    def __init__(self, number: int, body: dict[str, Any], reply: Reply) -> None:
        calls = tuple(replace(c, id=c.id or f"call_mock_{number}_{i}") for i, c in enumerate(reply.calls))
        self.reply = replace(reply, calls=calls)
        self.body = body
        self.number = number
        self.id = f"resp_mock_{number}"
        self._sequence = 0

    def _reasoning_item(self, summary: list[str]) -> dict[str, Any]:
        return {
            "id": f"rs_mock_{self.number}",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": text} for text in summary],
            "encrypted_content": self.reply.signature or f"mock-encrypted-{self.number}",
        }

    def _message_item(self, text: str | None) -> dict[str, Any]:
        content = [] if text is None else [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        status = "in_progress" if text is None else "completed"
        return {
            "id": f"msg_mock_{self.number}",
            "type": "message",
            "role": "assistant",
            "status": status,
            "content": content,
        }

    def _call_item(self, index: int, call: Call, arguments: str) -> dict[str, Any]:
        return {
            "id": f"fc_mock_{self.number}_{index}",
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": arguments,
            "status": "completed" if arguments else "in_progress",
        }

    def output(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if self.reply.reasoning is not None:
            items.append(self._reasoning_item(summary_parts(self.reply.reasoning)))
        if self.reply.content is not None:
            items.append(self._message_item(self.reply.content))
        items += [self._call_item(i, c, arguments_text(c)) for i, c in enumerate(self.reply.calls)]
        return items

    def usage(self) -> dict[str, Any]:
        reply = self.reply
        if reply.prompt_tokens is not None:
            prompt = reply.prompt_tokens
        else:
            prompt = rough_tokens(json.dumps(self.body.get("input"))) + rough_tokens(json.dumps(self.body.get("tools")))
        reasoning = rough_tokens(reply.reasoning)
        calls = sum(rough_tokens(c.name + arguments_text(c)) for c in reply.calls)
        output = rough_tokens(reply.content) + reasoning + calls
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": prompt + output,
        }

    def response(self, *, done: bool = True) -> dict[str, Any]:
        incomplete = self.reply.finish_reason == "length"
        status = ("incomplete" if incomplete else "completed") if done else "in_progress"
        return {
            "id": self.id,
            "object": "response",
            "created_at": CREATED,
            "status": status,
            "model": self.body.get("model", "mock-model"),
            "output": self.output() if done else [],
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete and done else None,
            "error": None,
            "store": self.body.get("store", True),
            "usage": self.usage() if done else None,
        }

    def _event(self, kind: str, **fields: Any) -> str:
        payload = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"

    def stream(self) -> Iterator[str]:
        reply = self.reply
        yield self._event("response.created", response=self.response(done=False))
        yield self._event("response.in_progress", response=self.response(done=False))
        index = 0
        if reply.reasoning is not None:
            yield from self._reasoning_events(index, summary_parts(reply.reasoning))
            index += 1
        if reply.content is not None:
            for event in self._text_events(index, reply.content):
                if event is None:  # break_after: the stream fails mid-message
                    yield self._event("error", code="server_error", message="Mock stream interrupted", param=None)
                    return
                yield event
            index += 1
        for i, call in enumerate(reply.calls):
            yield from self._call_events(index, i, call)
            index += 1
        kind = "response.incomplete" if reply.finish_reason == "length" else "response.completed"
        yield self._event(kind, response=self.response())

    def _reasoning_events(self, index: int, summary: list[str]) -> Iterator[str]:
        item_id = f"rs_mock_{self.number}"
        yield self._event("response.output_item.added", output_index=index, item=self._reasoning_item([]))
        for n, text in enumerate(summary):
            where = {"item_id": item_id, "output_index": index, "summary_index": n}
            yield self._event(
                "response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""}
            )
            for piece in pieces(text):
                yield self._event("response.reasoning_summary_text.delta", **where, delta=piece)
            yield self._event("response.reasoning_summary_text.done", **where, text=text)
            yield self._event(
                "response.reasoning_summary_part.done", **where, part={"type": "summary_text", "text": text}
            )
        yield self._event("response.output_item.done", output_index=index, item=self._reasoning_item(summary))

    def _text_events(self, index: int, text: str) -> Iterator[str | None]:
        where = {"item_id": f"msg_mock_{self.number}", "output_index": index, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        yield self._event("response.output_item.added", output_index=index, item=self._message_item(None))
        yield self._event("response.content_part.added", **where, part=empty)
        for n, piece in enumerate(pieces(text)):
            if self.reply.break_after is not None and n >= self.reply.break_after:
                yield None
                return
            yield self._event("response.output_text.delta", **where, delta=piece, logprobs=[])
        yield self._event("response.output_text.done", **where, text=text, logprobs=[])
        yield self._event("response.content_part.done", **where, part={**empty, "text": text})
        yield self._event("response.output_item.done", output_index=index, item=self._message_item(text))

    def _call_events(self, index: int, number: int, call: Call) -> Iterator[str]:
        item_id = f"fc_mock_{self.number}_{number}"
        arguments = arguments_text(call)
        yield self._event("response.output_item.added", output_index=index, item=self._call_item(number, call, ""))
        for fragment in pieces(arguments, size=8):
            yield self._event(
                "response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=fragment
            )
        yield self._event(
            "response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments
        )
        yield self._event(
            "response.output_item.done", output_index=index, item=self._call_item(number, call, arguments)
        )
