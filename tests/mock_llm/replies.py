"""What the mock answers: ``Reply`` (a message, an error or a delay) and its ``Call``s, built with class methods,
plus their JSON form for scripting a mock in another process."""

import asyncio
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Self

DEFAULT_REPLY_TEXT = "OK"


@dataclass(frozen=True)
class Call:
    """One scripted tool call; ``arguments`` may be a raw string to simulate malformed JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """What the mock answers to one request. Build it with the class methods, not the constructor."""

    kind: str = "message"  # message | error | delay | raw
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[Call, ...] = ()
    finish_reason: str | None = None
    break_after: int | None = None  # streamed only: an SSE error event after this many content chunks
    status: int = 500
    message: str | None = None
    code: str | None = None
    retry_after: float | str | None = None
    times: int = 1
    seconds: float = 0.0
    then: "Reply | None" = None
    signature: str | None = None  # Anthropic: the thinking block's signature (default mock-signature-<n>)
    redacted: str | None = None  # Anthropic: a redacted_thinking block's data
    model: str | None = None  # Anthropic: the model the answer names (default: the one asked for)
    prompt_tokens: int | None = None  # the prompt tokens to report instead of the counted ones
    body: tuple[str, ...] = ()  # raw: the response body, written piece by piece
    content_type: str = "text/event-stream"  # raw: the response's media type
    cut: bool = False  # raw: the connection is dropped after the body, before the response is complete
    chunk_gap_s: float = 0.0  # streamed only: the pause before each chunk after the first (a model's token rate)

    @classmethod
    def text(
        cls,
        content: str,
        *,
        reasoning: str | None = None,
        finish_reason: str = "stop",
        break_after: int | None = None,
        signature: str | None = None,
    ) -> Self:
        """A plain assistant message, optionally preceded by ``reasoning_content`` (DeepSeek style)."""
        return cls(
            content=content,
            reasoning=reasoning,
            finish_reason=finish_reason,
            break_after=break_after,
            signature=signature,
        )

    @classmethod
    def tool_call(
        cls,
        name: str,
        args: dict[str, Any] | str,
        id: str | None = None,
        *,
        content: str | None = None,
        reasoning: str | None = None,
        signature: str | None = None,
    ) -> Self:
        """One tool call; ids default to deterministic ``call_mock_<n>``."""
        return cls(content=content, reasoning=reasoning, calls=(Call(name, args, id),), signature=signature)

    @classmethod
    def tool_calls(cls, *calls: Call, content: str | None = None, reasoning: str | None = None) -> Self:
        """Several (parallel) tool calls in one assistant message."""
        return cls(content=content, reasoning=reasoning, calls=calls)

    @classmethod
    def error(
        cls,
        status: int = 500,
        retry_after: float | str | None = None,
        times: int = 1,
        message: str | None = None,
        code: str | None = None,
    ) -> Self:
        """An OpenAI-shaped error response, repeated for the next ``times`` requests."""
        return cls(kind="error", status=status, retry_after=retry_after, times=times, message=message, code=code)

    @classmethod
    def delay(cls, seconds: float, then: "Reply | None" = None) -> Self:
        """Wait before answering with ``then`` (default reply when None), e.g. to trigger client timeouts."""
        return cls(kind="delay", seconds=seconds, then=then)

    @classmethod
    def raw(cls, *pieces: str, status: int = 200, content_type: str = "text/event-stream", cut: bool = False) -> Self:
        """A response body exactly as given (each piece flushed on its own), e.g. a malformed stream; with `cut`
        the connection then drops mid-response, as a provider's does when it breaks off."""
        return cls(kind="raw", body=pieces, status=status, content_type=content_type, cut=cut)

    @classmethod
    def empty(cls) -> Self:
        """An assistant message with neither content nor tool calls."""
        return cls(finish_reason="stop")

    @classmethod
    def overflow(cls, times: int = 1, window: int = 4000, used: int = 5000) -> Self:
        """OpenAI's answer to a prompt larger than the model's window (a 400 ``context_length_exceeded``)."""
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages resulted in {used} "
            "tokens. Please reduce the length of the messages."
        )
        return cls.error(400, times=times, message=message, code="context_length_exceeded")

    def paced(self, chunk_gap_s: float) -> Self:
        """This reply, streamed with a pause before each chunk after the first, as a model sends its tokens."""
        return replace(self, chunk_gap_s=chunk_gap_s)

    def reporting(self, prompt_tokens: int) -> Self:
        """This reply, with a usage that claims ``prompt_tokens`` for the prompt (a provider counting high)."""
        return replace(self, prompt_tokens=prompt_tokens)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Reply":
        data = dict(data)
        data["calls"] = tuple(Call(**c) for c in data.get("calls") or ())
        data["body"] = tuple(data.get("body") or ())
        if data.get("then") is not None:
            data["then"] = cls.from_dict(data["then"])
        return cls(**data)


def arguments_text(call: Call) -> str:
    """A call's arguments as the JSON text a provider sends (a raw string as it is)."""
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


async def resolve(reply: Reply) -> Reply:
    """Sleep through a chain of delay replies; the reply they end in (the default text when none)."""
    while reply.kind == "delay":
        await asyncio.sleep(reply.seconds)
        reply = reply.then or Reply.text(DEFAULT_REPLY_TEXT)
    return reply
