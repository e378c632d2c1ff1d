"""One server process's side of running turns: its worker id and liveness lock, lease renewal, the orphan sweep,
and the graceful shutdown (stop taking turns, wait for in-flight runs up to ``shutdown_grace_s``, fail the rest).

The shutdown deadline counts from the SIGTERM/SIGINT itself when the worker runs in the main thread (``memlet
server``): uvicorn first waits for open requests (``timeout_graceful_shutdown``, the same grace), then the lifespan
ends here, so blocking sends and async runs share one bound instead of adding up.
"""

import asyncio
import contextlib
import signal
import threading
import time
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.log import get_logger, log_fields
from memlet.net.outbound import policy_for
from memlet.turns.chunk_log import prune
from memlet.turns.lifecycle import SHUTDOWN_MESSAGE, close_runs, hold_liveness, renew_leases, sweep
from memlet.turns.registry import TurnRegistry

log = get_logger("runs.worker")


class RunWorker:
    def __init__(self, maker: async_sessionmaker[AsyncSession], turn_engine: AsyncEngine, settings: Settings) -> None:
        self.maker = maker
        self.turn_engine = turn_engine
        self.settings = settings
        self.policy = policy_for(settings)  # the interrupted runs' callbacks obey the outbound URL policy
        self.worker_id = f"worker-{uuid.uuid4()}"
        self.turns = TurnRegistry(settings.max_concurrent_turns)
        self.stopping_since: float | None = None
        self._liveness: AsyncConnection | None = None
        self._tending: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Take the liveness lock, close runs orphaned by dead workers, then keep leases and sweeps going."""
        self._liveness = await hold_liveness(self.turn_engine, self.worker_id)
        closed = await sweep(self.maker, self.worker_id, self.settings.run_lease_s, policy=self.policy)
        if closed:
            log.warning("closed runs left by a stopped server", extra=log_fields(count=len(closed)))
        self._tending = asyncio.create_task(self._tend(), name="run leases")
        self._watch_signals()

    async def _tend(self) -> None:
        lease_s = self.settings.run_lease_s
        while True:
            await asyncio.sleep(lease_s / 3)
            try:
                await renew_leases(self.maker, self.worker_id, self.turns.run_ids, lease_s)
                await sweep(self.maker, self.worker_id, lease_s, keep=self.turns.run_ids, policy=self.policy)
                await prune(self.maker)
            except Exception:
                log.exception("run lease renewal, sweep or chunk pruning failed")

    def _watch_signals(self) -> None:
        """Note when a stop signal arrives and stop taking turns (uvicorn's own handlers still run)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)
            if callable(previous):
                signal.signal(sig, self._noting(previous))

    def _noting(self, previous: Callable[[int, FrameType | None], Any]) -> Callable[[int, FrameType | None], None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            self.stopping_since = self.stopping_since or time.monotonic()
            self.turns.closing = True  # requests already being handled start no new turn (503 + Retry-After)
            previous(signum, frame)

        return handler

    async def shutdown(self) -> None:
        """Stop taking turns, wait for in-flight ones until the grace ends, then close the rest as failed."""
        started = time.monotonic()
        deadline = (self.stopping_since or started) + self.settings.shutdown_grace_s
        unfinished = await self.turns.drain(deadline)
        if self._tending is not None:
            self._tending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tending
        if unfinished:
            await close_runs(self.maker, unfinished, SHUTDOWN_MESSAGE, policy=self.policy)
        if self._liveness is not None:
            with contextlib.suppress(Exception):
                await self._liveness.invalidate()  # ends its session, and the liveness lock with it
                await self._liveness.close()
        log.info(
            "turns drained",
            extra=log_fields(stopped=len(unfinished), seconds=round(time.monotonic() - started, 2)),
        )
