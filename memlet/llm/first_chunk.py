"""Opening a provider stream with its first chunk read, so errors that arrive before any token can be retried."""

from typing import Any


async def with_first_chunk(stream: Any) -> tuple[Any, Any | None]:
    """`(stream, first chunk or None)`; the stream is closed when reading the first chunk fails."""
    try:
        return stream, await anext(stream, None)
    except BaseException:
        await stream.close()
        raise
