"""What both provider clients do with a stream once it is open: relay its events, then the result.

A provider client turns its stream's chunks into `ChatEvent`s with an assembler, whose `result()` is the final
`ChatResult`. Errors mid-stream are not retried: tokens already reached the caller, and a retry would repeat them.
"""

import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any, Protocol

from memlet import metrics
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.types import ChatEvent, ChatResult


class Assembler(Protocol):
    def feed(self, chunk: Any) -> Sequence[ChatEvent]: ...

    def result(self) -> ChatResult: ...


async def relay(
    stream: Any,
    first: Any | None,
    assembler: Assembler,
    sdk_error: type[Exception] | tuple[type[Exception], ...],
    to_llm_error: Callable[[Exception], Exception],
) -> AsyncGenerator[ChatEvent, None]:
    """Yield the events of `first` and then of the rest of `stream`, then the assembled result.

    The stream is closed however the relay ends; an `sdk_error` becomes `to_llm_error(exc)`.
    """
    try:
        chunk = first
        while chunk is not None:
            for event in assembler.feed(chunk):
                yield event
            chunk = await anext(stream, None)
    except sdk_error as exc:
        # Tokens already reached the caller: retrying now would duplicate them.
        raise to_llm_error(exc) from exc
    finally:
        await stream.close()
    yield assembler.result()


async def final_result(events: AsyncGenerator[ChatEvent, None]) -> ChatResult:
    """Drain `events` up to the `ChatResult`, closing the generator (and so the provider stream) after it."""
    async with contextlib.aclosing(events) as running:
        async for event in running:
            if isinstance(event, ChatResult):
                return event
    raise LLMEmptyResponseError("INTERNAL_SERVER_ERROR: LLM stream ended without a result")


async def metered(provider: str, events: AsyncGenerator[ChatEvent, None]) -> AsyncGenerator[ChatEvent, None]:
    """Re-yield `events` inside the provider's LLM-call metrics.

    A caller that stops after the result closes `events` (and so the provider stream) now, not at GC.
    """
    with metrics.llm_call(provider):
        async with contextlib.aclosing(events) as running:
            async for event in running:
                yield event
