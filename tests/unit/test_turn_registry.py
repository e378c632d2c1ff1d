"""The per-worker turn bound: slots, refusals, and the shutdown drain."""

import asyncio
import time

import pytest

from memlet.errors import ShuttingDownError, TooManyRequestsError
from memlet.turns.registry import TurnRegistry


async def test_full_registry_refuses_with_429_until_a_slot_frees() -> None:
    turns = TurnRegistry(limit=2)
    gate = asyncio.Event()
    turns.reserve("run-a")
    turns.start("run-a", gate.wait())  # type: ignore[arg-type]
    turns.reserve("run-b")
    with pytest.raises(TooManyRequestsError) as refused:
        turns.reserve("run-c")
    assert refused.value.headers() == {"Retry-After": "1"}
    turns.release("run-b")
    turns.reserve("run-c")
    gate.set()
    await turns.idle()
    assert turns.run_ids == ["run-c"]


async def test_drain_waits_for_quick_turns_and_cancels_the_rest() -> None:
    turns = TurnRegistry(limit=5)
    for run_id, seconds in (("run-quick", 0.1), ("run-slow", 30.0)):
        turns.reserve(run_id)
        turns.start(run_id, asyncio.sleep(seconds))
    turns.reserve("run-never-started")
    started = time.monotonic()
    unfinished = await turns.drain(deadline=time.monotonic() + 0.5)
    assert 0.4 < time.monotonic() - started < 2
    assert sorted(unfinished) == ["run-never-started", "run-slow"]
    with pytest.raises(ShuttingDownError):
        turns.reserve("run-late")


async def test_held_runs_wait_for_a_slot_and_are_returned_by_the_drain() -> None:
    turns = TurnRegistry(limit=1)
    turns.hold(["run-b1", "run-b2"])
    assert sorted(turns.run_ids) == ["run-b1", "run-b2"]  # vouched for (leases renewed) before they start
    gate = asyncio.Event()
    turns.reserve("run-a")
    turns.start("run-a", gate.wait())  # type: ignore[arg-type]
    waiting = asyncio.create_task(turns.acquire("run-b1", poll_s=0.01))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # the worker is full: the batch's run waits instead of failing with 429
    gate.set()
    await asyncio.wait_for(waiting, 1)
    assert "run-b1" in turns.reserved and "run-b1" not in turns.held

    driver = turns.start_driver("job-1", asyncio.sleep(30))
    unfinished = await turns.drain(deadline=time.monotonic())
    assert sorted(unfinished) == ["run-b1", "run-b2"] and driver.cancelled()
    with pytest.raises(ShuttingDownError):
        await turns.acquire("run-b2")
    with pytest.raises(ShuttingDownError):
        turns.hold(["run-late"])
