"""The sink of a streamed run: loop items → SSE chunks, numbered and logged (``chunk_log``), handed to the request.

The pump runs inside the run's own task (the turn registry's, not the request's), so the log is complete whether or not
a client still listens. ``started`` resolves when the loop holds the agent's lock (``start``, the loop's
``on_started``), or fails with the error the loop raised before that only for a busy agent (Letta's 409, raised before
its response starts). Other early errors (a pending approval, approval answers that match nothing) are in-stream errors,
pings or not, as in Letta, whose stream service turns whatever the loop raises into a 200 stream: the first ping (with
pings), then ``stop_reason: error``, the ``event: error`` and ``[DONE]``. A plain stream reads ``live`` (this process's
copy of the chunks as they are logged); a background stream reads the log itself (``resume.follow``).
"""

import asyncio
from collections.abc import AsyncIterator

from memlet.errors import AgentBusyError, MemletError
from memlet.loop import events as ev
from memlet.messages.schemas import LettaPing
from memlet.turns.chunk_log import ChunkLog
from memlet.turns.streaming import EventRenderer, sse

# Letta pings a silent stream every LETTA_KEEPALIVE_INTERVAL (20 s by default) so proxies keep it open.
KEEPALIVE_INTERVAL_S = 20.0
END = object()

Item = ev.LoopEvent | BaseException | object


class StreamPump:
    def __init__(self, renderer: EventRenderer, chunks: ChunkLog, *, include_pings: bool, live: bool = True) -> None:
        self.renderer = renderer
        self.chunks = chunks
        self.include_pings = include_pings
        self.started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.live: asyncio.Queue[str | None] = asyncio.Queue()
        self._keep_live = live  # a background stream's reader reads the log: keep no copy nobody reads
        self.ended = False

    @property
    def run_id(self) -> str:
        return self.renderer.run_id

    async def __call__(self, item: Item) -> None:
        if item is END:
            await self._end()
        elif isinstance(item, BaseException):
            if not self.started.done():
                # A busy agent is an HTTP 409; any other early error is in-stream (after the first ping, with pings).
                if isinstance(item, AgentBusyError):
                    self.started.set_exception(item)
                    return
                await self.start()
            await self._emit(self.renderer.failure(item))
            self.ended = True
        else:
            await self._emit(self.renderer.render(item))  # type: ignore[arg-type]
            self.ended = self.ended or isinstance(item, ev.RunFinished | ev.RunFailed)

    async def start(self) -> None:
        """The loop holds the agent's lock: the first ping (with pings), and the request may answer 200."""
        if self.include_pings:
            await self._emit([sse(LettaPing.create(self.run_id))])
        self.started.set_result(None)

    async def _end(self) -> None:
        if not self.started.done():
            self.started.set_exception(MemletError("The run ended before it started."))
        elif not self.ended:
            # The loop ended without its final event: close the stream the way Letta guarantees.
            incomplete = MemletError("Stream ended unexpectedly without a terminal event.")
            await self._emit(self.renderer.failure(incomplete, "error", "stream_incomplete"))
        self.live.put_nowait(None)  # the response ends now; the log's last writes go on in the run's task
        await self.chunks.close()

    async def _emit(self, chunks: list[str]) -> None:
        for chunk in chunks:
            text = self.chunks.append(chunk)  # logged in a task of its own: the reader never waits for it
            if self._keep_live:
                self.live.put_nowait(text)

    async def live_chunks(self) -> AsyncIterator[str]:
        """This process's copy of the run's chunks, with keep-alive pings while it is silent. Chunks already
        waiting are handed on together (one write to the client instead of one each)."""
        live = self.live
        while True:
            if live.empty():
                try:
                    async with asyncio.timeout(KEEPALIVE_INTERVAL_S):  # a timer, not a task per chunk
                        chunk = await live.get()
                except TimeoutError:
                    if self.include_pings:
                        yield sse(LettaPing.create(self.run_id))
                    continue
            else:
                chunk = live.get_nowait()
            taken = [chunk]  # with what else is waiting, up to the end (None)
            while taken[-1] is not None and not live.empty():
                taken.append(live.get_nowait())
            if text := "".join(c for c in taken if c is not None):
                yield text
            if taken[-1] is None:
                return
