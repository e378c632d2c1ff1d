"""This worker's in-flight turns: bounded by ``max_concurrent_turns``, drained when the server shuts down.

A send reserves a slot before its run row is written (a full worker answers 429 + Retry-After at once instead
of queueing into timeouts), then the slot becomes the loop's task until the task ends. At shutdown the registry
stops taking turns, waits for the in-flight ones up to a deadline, and cancels the rest; the caller closes their
runs (``memlet.turns.lifecycle.close_runs``).

A message batch writes all its run rows up front but starts them later: its runs are *held* (this worker vouches
for them, so their leases are renewed) until each one waits for a free slot (``acquire``). The batch's driver is
a task of its own, outside the slot count, cancelled at shutdown with the turns.
"""

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

from memlet.errors import ShuttingDownError, TooManyRequestsError

# How long a cancelled turn may take to unwind (release its lock, roll back) before shutdown moves on.
CANCEL_WAIT_S = 5.0


class TurnRegistry:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.reserved: set[str] = set()
        self.held: set[str] = set()
        self.drivers: dict[str, asyncio.Task[None]] = {}
        self.closing = False

    @property
    def run_ids(self) -> list[str]:
        """Runs this worker is responsible for right now (their leases are renewed)."""
        return [*self.reserved, *self.tasks, *self.held]

    @property
    def has_room(self) -> bool:
        """Whether `reserve` would take a slot now."""
        return not self.closing and len(self.reserved) + len(self.tasks) < self.limit

    def reserve(self, run_id: str) -> None:
        """Take a slot for `run_id`; raises ShuttingDownError (503) or TooManyRequestsError (429)."""
        if self.closing:
            raise ShuttingDownError()
        if len(self.reserved) + len(self.tasks) >= self.limit:
            raise TooManyRequestsError(
                f"This server is already processing {self.limit} messages (MEMLET_MAX_CONCURRENT_TURNS); retry shortly."
            )
        self.reserved.add(run_id)

    def release(self, run_id: str) -> None:
        """Give back a slot whose turn never started (or drop a held run that will not start)."""
        self.reserved.discard(run_id)
        self.held.discard(run_id)

    def hold(self, run_ids: list[str]) -> None:
        """Vouch for runs that will start later (a batch's); raises ShuttingDownError when closing."""
        if self.closing:
            raise ShuttingDownError()
        self.held.update(run_ids)

    async def acquire(self, run_id: str, poll_s: float = 0.05) -> None:
        """Turn a held run into a reserved one as soon as a slot is free; raises ShuttingDownError when closing."""
        while True:
            try:
                self.reserve(run_id)
            except TooManyRequestsError:
                await asyncio.sleep(poll_s)
                continue
            self.held.discard(run_id)
            return

    def start_driver(self, key: str, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run a batch's driver (it starts turns itself; it takes no slot) and keep it until it ends."""
        task = asyncio.create_task(coro, name=f"batch {key}")
        self.drivers[key] = task
        task.add_done_callback(lambda _: self.drivers.pop(key, None))
        return task

    def start(self, run_id: str, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run the turn in a detached task holding the slot until it ends (held here, so it is never collected)."""
        self.reserved.discard(run_id)
        task = asyncio.create_task(coro, name=f"run {run_id}")
        self.tasks[run_id] = task
        task.add_done_callback(lambda _: self.tasks.pop(run_id, None))
        return task

    async def idle(self) -> None:
        """Wait until no turn is in flight."""
        while self.tasks:
            await asyncio.wait(list(self.tasks.values()))

    async def drain(self, deadline: float) -> list[str]:
        """Stop taking turns, let in-flight ones finish until `deadline` (monotonic), cancel the rest.

        Returns the runs that did not finish (cancelled, or reserved and never started).
        """
        self.closing = True  # drivers stop starting turns: their next acquire raises ShuttingDownError
        while self.tasks and (left := deadline - time.monotonic()) > 0:
            await asyncio.wait(list(self.tasks.values()), timeout=left, return_when=asyncio.FIRST_COMPLETED)
        unfinished = dict(self.tasks)
        for task in unfinished.values():
            task.cancel("the server is shutting down")
        drivers = list(self.drivers.values())
        for driver in drivers:
            driver.cancel("the server is shutting down")
        if unfinished or drivers:
            await asyncio.wait([*unfinished.values(), *drivers], timeout=CANCEL_WAIT_S)
        return [*unfinished, *self.reserved, *self.held]
