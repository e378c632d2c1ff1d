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
