"""Noticing a cancel while a step runs, not only between steps.

A `CancelWatch` lives as long as one request. It fires when the run's row turns `cancelled` or at once when this
process cancels the run (`signal`). One poller per event loop reads the rows of every watched run in one statement
every `POLL_S` (so a cancel sent to another memlet process is seen too), whatever the number of runs in flight: 50
slow turns cost one connection every 0.4 s, not 50. The LLM call, its stream and the tool execution of a step race the
watch (`raced`, `guarded`); when it fires first they are cancelled and `RunCancelled` is raised, so the run
ends within about half a second of the cancel. Commits are never raced: a step is written whole or not at all.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from types import TracebackType
from typing import Self, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.db.engine import single_read
from memlet.log import get_logger
from memlet.runs.repository import RunRepository

POLL_S = 0.4

T = TypeVar("T")
log = get_logger("loop.cancel_signal")
_watches: dict[str, asyncio.Event] = {}
_pollers: dict[asyncio.AbstractEventLoop, "_Poller"] = {}


class _Poller:
    """The watched runs of one event loop, polled together."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[asyncio.Event, async_sessionmaker[AsyncSession]]] = {}
        self.task: asyncio.Task[None] | None = None

    def add(self, run_id: str, event: asyncio.Event, maker: async_sessionmaker[AsyncSession]) -> None:
        self.runs[run_id] = (event, maker)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self.runs:
            await asyncio.sleep(POLL_S)
            groups: dict[async_sessionmaker[AsyncSession], list[str]] = {}
            for run_id, (event, maker) in list(self.runs.items()):
                if not event.is_set():
                    groups.setdefault(maker, []).append(run_id)
            for maker, run_ids in groups.items():
                try:
                    async with single_read(maker) as session:  # one SELECT: no BEGIN and ROLLBACK around it
                        cancelled = await RunRepository(session).cancelled_among(run_ids)
                except Exception:  # a failed poll is retried; the step-boundary check still reads the rows
                    log.warning("could not read the runs' status", extra={"run_ids": run_ids})
                    continue
                for run_id in cancelled:
                    if (watched := self.runs.get(run_id)) is not None:
                        watched[0].set()


class RunCancelled(Exception):
    """The run was cancelled while a step was in flight."""


def signal(run_id: str) -> None:
    """Fire the watch of `run_id` if it runs in this process (the cancel routes call this)."""
    event = _watches.get(run_id)
    if event is not None:
        event.set()


class CancelWatch:
    """The cancel signal of one run: an in-process event plus a poll of the run row."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], run_id: str) -> None:
        self.sessionmaker = sessionmaker
        self.run_id = run_id
        self.event = asyncio.Event()

    @property
    def fired(self) -> bool:
        return self.event.is_set()

    async def __aenter__(self) -> Self:
        _watches[self.run_id] = self.event
        loop = asyncio.get_running_loop()
        _pollers.setdefault(loop, _Poller()).add(self.run_id, self.event, self.sessionmaker)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _watches.pop(self.run_id, None)
        poller = _pollers.get(asyncio.get_running_loop())
        if poller is not None:
            poller.runs.pop(self.run_id, None)

    async def race(self, work: Awaitable[T]) -> T:
        """Await `work` unless the run is cancelled first (then `work` is cancelled and RunCancelled raised)."""
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(self.event.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise RunCancelled(self.run_id)


async def raced(watch: CancelWatch | None, work: Awaitable[T]) -> T:
    """`work`, raced against the watch when there is one."""
    if watch is None:
        return await work
    return await watch.race(work)


async def guarded(watch: CancelWatch | None, items: AsyncIterator[T]) -> AsyncIterator[T]:
    """The items of `items` (an LLM stream), each read interrupted when the run is cancelled first: the read then
    ends with RunCancelled, and so does the next one once the watch has fired.

    The reads run in the caller's own task, not in a task per item: a token stream of 400 chunks would otherwise
    build 800 tasks and 400 waits. One waiter follows the watch for the whole stream and, when it fires during a
    read, cancels the caller's task, which only a read can be waiting in then (a cancel reaches a task where it
    is suspended); what the caller does with an item between reads is never interrupted.
    """
    if watch is None:
        async for item in items:
            yield item
        return
    reader: asyncio.Task[object] | None = None  # the task suspended in a read, while one is in progress
    interrupted = False

    def interrupt(_: object) -> None:
        nonlocal interrupted
        if reader is not None and not interrupted:
            interrupted = True
            reader.cancel()

    waiter = asyncio.ensure_future(watch.event.wait())
    waiter.add_done_callback(interrupt)
    try:
        while not watch.fired:
            current = reader = asyncio.current_task()
            assert current is not None
            try:
                item = await anext(items)
            except StopAsyncIteration:
                if not interrupted:
                    return
            except asyncio.CancelledError:
                # Ours, and the only one pending: the run was cancelled. Any other cancel goes on up.
                if interrupted and current.uncancel() == 0:
                    raise RunCancelled(watch.run_id) from None
                raise
            finally:
                reader = None
            if interrupted:  # a layer below the read swallowed the cancel: take it back, end as cancelled
                current.uncancel()
                raise RunCancelled(watch.run_id)
            yield item
        raise RunCancelled(watch.run_id)
    finally:
        waiter.remove_done_callback(interrupt)
        waiter.cancel()
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
