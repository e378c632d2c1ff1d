"""Runs no worker will finish: find them, close them as failed, settle their agent, fire their callbacks.

A worker leases every run it takes (``runs.worker_id``, ``runs.lease_expires_at``) and renews the lease while the
run is in flight. It also holds a liveness lock for its whole life: a session-level advisory lock keyed by its
worker id, on a connection of its own, which Postgres drops the moment the process dies (SIGKILL included). A run
still ``created``/``running`` is orphaned when its lease expired, when its worker's liveness lock is free, or when
it has no worker and is older than one lease (rows from before leases, or loops run without a worker). Each worker
closes orphaned runs at start-up and in a periodic sweep; at shutdown it closes its own leftovers the same way.

Closing a run: status ``failed`` with stop reason ``error`` (Letta has no "server stopped" reason; ``cancelled``
would read as a client's cancel and means run status ``cancelled``), the end of its chunk log when it streamed
(stop reason ``error``, an ``error_message``, ``[DONE]``, so a resumed stream ends), that error message as
``metadata.error`` (``internal_error``, the cause in ``detail``), ``error`` as the agent's ``last_stop_reason``,
and, when the run's own approval request is still pending, a denial like a cancel writes, so the agent takes a
normal message again. Nothing else needs repair: a step commits its tool calls together with their returns, so a crash never leaves a call unanswered.
"""

import asyncio
from collections.abc import Iterable, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import Actor
from memlet.db.locks import hold_session_lock, lock_is_free
from memlet.log import get_logger, log_fields
from memlet.loop.cancel import deny_pending
from memlet.net.outbound import OutboundPolicy
from memlet.runs.callbacks import dispatch_run_callback
from memlet.runs.repository import RunRepository
from memlet.turns.chunk_log import end_log, ending_error

log = get_logger("runs.lifecycle")

SHUTDOWN_MESSAGE = "The server shut down before the run finished."
LOST_MESSAGE = "The server process running this run stopped (crash or restart) before the run finished."
DENIAL_REASON = "The server stopped before the run finished, so the tool call was denied."


def _liveness_lock(worker_id: str) -> str:
    return f"worker:{worker_id}"


async def hold_liveness(engine: AsyncEngine, worker_id: str) -> AsyncConnection:
    """Take this worker's liveness lock on a connection kept open for the worker's life (close it to let go)."""
    conn = await engine.connect()
    await hold_session_lock(conn, _liveness_lock(worker_id))
    await conn.commit()
    return conn


async def renew_leases(
    maker: async_sessionmaker[AsyncSession], worker_id: str, run_ids: Sequence[str], lease_s: float
) -> None:
    """Extend the leases of the runs this worker has in flight (one statement)."""
    if not run_ids:
        return
    async with maker() as session, session.begin():
        await RunRepository(session).renew_leases(worker_id, run_ids, lease_s)


async def find_orphans(
    maker: async_sessionmaker[AsyncSession], worker_id: str, lease_s: float, keep: Iterable[str] = ()
) -> list[str]:
    """Active runs nobody will finish (see the module docstring), except `keep` (this worker's own)."""
    async with maker() as session, session.begin():
        runs = RunRepository(session)
        # Workers owning active runs whose liveness lock is free: their process is gone.
        dead = [
            owner
            for owner in await runs.active_owners(other_than=worker_id)
            if await lock_is_free(session, _liveness_lock(owner))
        ]
        return await runs.orphan_ids(dead, lease_s, list(keep))


async def _close_one(maker: async_sessionmaker[AsyncSession], run_id: str, message: str) -> Actor | None:
    """Close one run if it is still active; returns who owns it (for its callback), None if it was not closed."""
    async with maker() as session, session.begin():
        error = ending_error(run_id, message).model_dump(mode="json")
        run = await RunRepository(session).close_interrupted(run_id, error)
        if run is None:
            return None
        if run.agent_id is not None:
            await deny_pending(session, run.agent_id, run.id, reason=DENIAL_REASON, stop_reason="error", only_own=True)
        return Actor(run.created_by_id or ids.DEFAULT_USER_ID, run.organization_id)


async def close_runs(
    maker: async_sessionmaker[AsyncSession], run_ids: Sequence[str], message: str, *, policy: OutboundPolicy
) -> list[str]:
    """Close `run_ids` as interrupted (the still-active ones), then fire their callbacks; returns the closed ids."""
    closed: list[tuple[str, Actor]] = []
    for run_id in run_ids:
        try:
            actor = await _close_one(maker, run_id, message)
        except Exception:
            log.exception("could not close an interrupted run", extra=log_fields(run_id=run_id))
            continue
        if actor is not None:
            closed.append((run_id, actor))
    if closed:
        log.warning("closed interrupted runs", extra=log_fields(run_ids=[r for r, _ in closed], reason=message))
    for run_id, _ in closed:  # a streamed run's readers get its ending (stop reason error, error, [DONE])
        try:
            await end_log(maker, run_id, message)
        except Exception:
            log.exception("could not end an interrupted run's stream", extra=log_fields(run_id=run_id))
    await asyncio.gather(*(dispatch_run_callback(maker, actor, run_id, policy=policy) for run_id, actor in closed))
    return [run_id for run_id, _ in closed]


async def sweep(
    maker: async_sessionmaker[AsyncSession],
    worker_id: str,
    lease_s: float,
    keep: Iterable[str] = (),
    *,
    policy: OutboundPolicy,
) -> list[str]:
    """Close every orphaned run (start-up and the periodic sweep); returns the closed ids."""
    orphans = await find_orphans(maker, worker_id, lease_s, keep)
    return await close_runs(maker, orphans, LOST_MESSAGE, policy=policy)
