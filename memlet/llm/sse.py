"""Server-sent events, decoded incrementally from the byte chunks of a streamed HTTP response.

Lines end in LF, CRLF or CR, and a line may be split across reads (a CR at the end of one read waits for the next
to tell CR from CRLF). ``data:`` lines accumulate until a blank line ends the event; ``event:`` names it;
comments (``:``, e.g. keep-alives) and the ``id`` / ``retry`` fields are ignored, as is an event without data.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerEvent:
    data: bytes  # the event's data lines joined with LF
    event: str | None = None


class SSEDecoder:
    """``feed(chunk)`` returns the events the chunk completed; ``flush()`` those left when the body ends."""

    __slots__ = ("_data", "_event", "_pending")

    def __init__(self) -> None:
        self._pending = b""
        self._data: list[bytes] = []
        self._event: str | None = None

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        if (
            chunk[:6] == b"data: "
            and chunk.find(b"\n", 6) == len(chunk) - 2
            and chunk[-1:] == b"\n"
            and not (self._pending or self._data or self._event)
            and b"\r" not in chunk
        ):
            # The usual read of a provider stream: exactly one event of one data line (`data: {...}\n\n`).
            return [ServerEvent(chunk[6:-2])]
        text = self._pending + chunk if self._pending else chunk
        # The complete lines end at the last LF, or at the last CR that is not the final byte (it may be a CRLF).
        end = max(text.rfind(b"\n"), text.rfind(b"\r", 0, len(text) - 1))
        if end < 0:
            self._pending = text
            return []
        self._pending = text[end + 1 :]
        events: list[ServerEvent] = []
        for line in text[: end + 1].splitlines():
            self._line(line, events)
        return events

    def flush(self) -> list[ServerEvent]:
        """The events a body that ends without a final blank line leaves (lenient: the last one is kept)."""
        events: list[ServerEvent] = []
        for line in self._pending.splitlines():
            self._line(line, events)
        self._pending = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[ServerEvent]) -> None:
        if not line:
            if self._data:
                events.append(ServerEvent(b"\n".join(self._data), self._event))
            self._data = []
            self._event = None
            return
        field, _, value = line.partition(b":")
        if not field:
            return  # a comment
        if value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            self._data.append(value)
        elif field == b"event":
            self._event = value.decode("utf-8", "replace")
