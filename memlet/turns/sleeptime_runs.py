"""Sleeptime runs on this worker: fire them after foreground turns, start the queued ones in the background.

A foreground turn ends → `after_turn` counts it and, when it fires, queues a run for each sleeptime agent in one
short transaction (`memlet.sleeptime.firing`), then wakes the starter. The turn never waits for a sleeptime run.

The starter claims queued runs (`QueuedRunRepository.claim`: one worker takes each, once, and only when its
agent has no run in flight) and runs them through the one `SendService` and loop, each in a slot of the turn
registry, reserved before the claim: a claimed run never waits for a slot, so a shutdown leaves it queued. It
wakes when a run is queued, when one of its runs ends (a coalesced run may be waiting), and every `poll_s` (runs
queued by another worker, or left queued when a server stopped: a queued run has not started, so
after a restart it simply starts, exactly once). A finished run keeps its response in ``metadata.result``, as
Letta keeps it, written in the transaction that closes the run.
"""

import asyncio
import contextlib

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.errors import ShuttingDownError, TooManyRequestsError
from memlet.log import get_logger, log_fields
from memlet.loop import events as ev
from memlet.loop.runner import LoopDeps
from memlet.messages.requests import LettaRequest, MessageCreate
from memlet.messages.schemas import ChoiceLogprobs, LettaResponse, StoredMessage
from memlet.runs.queue_repository import QueuedRunRepository
from memlet.runs.repository import RunRepository
from memlet.sleeptime.firing import SleeptimeWork, active_group_id, fire_after_turn, prepare
from memlet.turns.registry import TurnRegistry
from memlet.turns.send_request import view_options
from memlet.turns.sending import SendService
from memlet.turns.stream_pump import END, Item
from memlet.turns.streaming import public_views, stop_reason, usage_of

log = get_logger("sleeptime.runs")

# How long `stop` lets a claim under way finish before cancelling it (a cancelled claim rolls back).
STOP_WAIT_S = 5.0


class _Rollback(Exception):
    """Nothing to claim, or the server is stopping: the claim's transaction rolls back."""


class SleeptimeRuns:
    def __init__(self, deps: LoopDeps, turns: TurnRegistry, *, poll_s: float = 2.0) -> None:
        self.deps = deps
        self.turns = turns
        self.poll_s = poll_s
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def group_of(self, org_id: str, agent_id: str) -> str | None:
        """The sleeptime group the agent manages with sleeptime on (its inputs carry the group id), if any."""
        async with self.deps.sessionmaker() as session:
            return await active_group_id(session, org_id, agent_id)

    async def after_turn(self, actor: Actor, agent_id: str, last_message_id: str | None) -> list[str]:
        """Count a finished turn and queue its sleeptime runs; returns their ids (never raises)."""
        try:
            async with self.deps.sessionmaker() as session, session.begin():
                run_ids = await fire_after_turn(session, actor, agent_id, last_message_id)
        except Exception:
            log.exception("could not queue sleeptime runs", extra=log_fields(agent_id=agent_id))
            return []
        if run_ids:
            self._wake.set()
        return run_ids

    def start(self) -> None:
        self._task = asyncio.create_task(self._serve(), name="sleeptime runs")

    async def stop(self) -> None:
        """Start no more runs. A claim under way finishes (its run starts) or rolls back (it stays queued)."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=STOP_WAIT_S)
            if not done:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
            self._task = None

    async def _serve(self) -> None:
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            try:
                while not self._stopping and await self._start_one():
                    pass
            except Exception:
                log.exception("could not start queued sleeptime runs")

    async def _start_one(self) -> bool:
        """Claim one queued run and start it; False when none is ready, no slot is free or the server stops.

        The slot is reserved before the claim, and the claim commits only once the slot is the run's: a claimed
        run never waits for a slot, so a shutdown finds each sleeptime run still queued (it starts, once, after
        the restart) or in flight (drained like any turn).
        """
        # The poll must not hold a foreground turn's slot for nothing: look at the queue before reserving one.
        async with self.deps.sessionmaker() as session:
            if not await QueuedRunRepository(session).any_queued():
                return False
        slot = f"sleeptime-claim:{id(self)}"
        try:
            self.turns.reserve(slot)
        except (ShuttingDownError, TooManyRequestsError):
            return False
        try:
            work = await self._claim()
            if work is not None:
                self._launch(work)  # its task takes a slot of its own before this one is given back
            return True
        except _Rollback:
            return False
        finally:
            self.turns.release(slot)

    async def _claim(self) -> SleeptimeWork | None:
        """Claim and prepare a run. Raises _Rollback when nothing is queued or the server is stopping (the run
        stays queued); None when the claimed run or its group is gone."""
        worker_id = self.deps.worker_id or "worker-none"
        async with self.deps.sessionmaker() as session, session.begin():
            claimed = await QueuedRunRepository(session).claim(worker_id, self.deps.settings.run_lease_s)
            if claimed is None:
                raise _Rollback()
            work = await prepare(session, claimed)
            if work is None or work.run.status != "created":
                if work is None:
                    await RunRepository(session).mark_failed(claimed.run_id, "The sleeptime group no longer exists.")
                return None
            if self._stopping or self.turns.closing:
                raise _Rollback()
        return work  # leased to this worker: started at once, with no wait in between

    def _launch(self, work: SleeptimeWork) -> None:
        message = MessageCreate(role="user", content=work.text, group_id=work.group_id)
        request = LettaRequest(messages=[message])
        agent_id = str(work.run.agent_id)
        # The loop hands the sink each step's messages, but those of the step whose commit closes the run go to
        # `keep_result` (in that commit's transaction) first.
        committed: list[StoredMessage] = []

        async def sink(item: Item) -> None:
            if isinstance(item, ev.MessagesCommitted):
                committed.extend(item.messages)
            elif item is END:
                self._wake.set()  # a run queued meanwhile for this agent may start now

        async def keep_result(session: AsyncSession, finished: ev.RunFinished, last: list[StoredMessage]) -> None:
            await _keep_result(session, work.run.id, request, [*committed, *last], finished)

        SendService(self.deps, work.actor, self.turns).launch(
            agent_id, work.run, request, sink=sink, on_finish=keep_result
        )
        log.info("started a sleeptime run", extra=log_fields(run_id=work.run.id, agent_id=agent_id))


async def _keep_result(
    session: AsyncSession,
    run_id: str,
    request: LettaRequest,
    committed: list[StoredMessage],
    finished: ev.RunFinished,
) -> None:
    """Store the run's response in its ``metadata.result``, as Letta does for sleeptime runs, in the transaction
    that completes the run (a poll never sees it completed without its result). A failure here (in a savepoint)
    leaves the result out but the run closed."""
    result = LettaResponse(
        messages=public_views(committed, view_options("sleeptime_agent", request)),
        stop_reason=stop_reason(finished.stop_reason),
        usage=usage_of(finished.usage),
        logprobs=ChoiceLogprobs.of(finished.logprobs),
    )
    try:
        async with session.begin_nested():
            await RunRepository(session).add_metadata(run_id, {"result": result.model_dump(mode="json")})
    except Exception:
        log.exception("could not store a sleeptime run's result", extra=log_fields(run_id=run_id))
