"""`guarded`: an LLM stream read under the run's cancel watch. Its reads run in the caller's own task (no task per
chunk), a cancel interrupts a read in progress at once, never the caller's work between reads, and any other
cancel of the caller still reaches it as a cancel."""

import asyncio
from collections.abc import AsyncIterator

import pytest

from memlet.loop.cancel_signal import CancelWatch, RunCancelled, guarded


def watch() -> CancelWatch:
    return CancelWatch(None, "run-guarded")  # type: ignore[arg-type]  # not entered: no poller, only its event


class Stream:
    """An async stream of numbered items; `slow_after` items in, a read waits `slow_s`."""

    def __init__(self, items: int, *, slow_after: int | None = None, slow_s: float = 5.0, swallow: bool = False):
        self.items, self.slow_after, self.slow_s, self.swallow = items, slow_after, slow_s, swallow
        self.tasks: list[asyncio.Task[object] | None] = []
        self.reads_started = 0
        self.cancelled_inside = False
        self.closed = False

    async def __call__(self) -> AsyncIterator[int]:
        try:
            for n in range(self.items):
                self.reads_started += 1
                self.tasks.append(asyncio.current_task())
                if self.slow_after is not None and n >= self.slow_after:
                    try:
                        await asyncio.sleep(self.slow_s)
                    except asyncio.CancelledError:
                        self.cancelled_inside = True
                        if not self.swallow:
                            raise
                yield n
        finally:
            self.closed = True


async def drain(items: AsyncIterator[int], got: list[int], cancel_at: tuple[int, CancelWatch] | None = None) -> None:
    """Collect the items into `got`; with `cancel_at` (n, watch), fire the watch after item n and then work a
    while (the caller's own work between reads, which must finish)."""
    async for n in items:
        got.append(n)
        if cancel_at is not None and n == cancel_at[0]:
            cancel_at[1].event.set()
            await asyncio.sleep(0.05)
            got.append(-1)


async def test_every_read_runs_in_the_callers_task() -> None:
    stream = Stream(400)
    got = [n async for n in guarded(watch(), stream())]
    assert got == list(range(400))
    assert set(stream.tasks) == {asyncio.current_task()}  # not one task per chunk


async def test_a_cancel_interrupts_a_read_in_progress() -> None:
    cancel = watch()
    stream = Stream(10, slow_after=2)
    got: list[int] = []
    loop = asyncio.get_running_loop()
    started = loop.time()
    loop.call_later(0.05, cancel.event.set)
    with pytest.raises(RunCancelled):
        await drain(guarded(cancel, stream()), got)
    assert loop.time() - started < 1.0  # not the 5 s read
    assert got == [0, 1] and stream.cancelled_inside and stream.closed
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # the cancel it used is taken back


async def test_work_between_reads_is_not_interrupted() -> None:
    cancel = watch()
    stream = Stream(10)
    got: list[int] = []
    with pytest.raises(RunCancelled):
        await drain(guarded(cancel, stream()), got, cancel_at=(1, cancel))
    assert got == [0, 1, -1]
    assert stream.reads_started == 2 and stream.closed  # no read after the cancel


async def test_another_cancel_of_the_caller_stays_a_cancel() -> None:
    stream = Stream(10, slow_after=1)

    async def consume() -> list[int]:
        return [n async for n in guarded(watch(), stream())]

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stream.cancelled_inside


async def test_a_cancel_swallowed_below_the_read_still_ends_the_stream() -> None:
    cancel = watch()
    stream = Stream(10, slow_after=1, swallow=True)
    got: list[int] = []
    asyncio.get_running_loop().call_later(0.05, cancel.event.set)
    with pytest.raises(RunCancelled):
        await drain(guarded(cancel, stream()), got)
    assert got == [0] and stream.cancelled_inside
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0


async def test_a_watch_fired_before_the_stream_reads_nothing() -> None:
    cancel = watch()
    cancel.event.set()
    stream = Stream(3)
    with pytest.raises(RunCancelled):
        async for _ in guarded(cancel, stream()):
            pass
    assert stream.reads_started == 0
