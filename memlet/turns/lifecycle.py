"""Runs no worker will finish: find them, close them as failed, settle their agent, fire their callbacks.

A worker leases every run it takes (``runs.worker_id``, ``runs.lease_expires_at``) and renews the lease while the
run is in flight. It also holds a liveness lock for its whole life: a session-level advisory lock keyed by its
worker id, on a connection of its own, which Postgres drops the moment the process dies (SIGKILL included). A run
still ``created``/``running`` is orphaned when its lease expired, when its worker's liveness lock is free, or when
it has no worker and is older than one lease (rows from before leases, or loops run without a worker). Each worker
closes orphaned runs at start-up and in a periodic sweep; at shutdown it closes its own leftovers the same way.

Closing a run: status ``failed`` with stop reason ``error`` (Letta has no "server stopped" reason; ``cancelled``
would read as a client's cancel and means run status ``cancelled``), the end of its chunk log when it streamed
(stop reason ``error``, an ``error_message``, ``[DONE]``, so a resumed stream ends), the cause in ``metadata.error``
(``RunInterrupted``), ``error`` as the agent's ``last_stop_reason``, and, when the run's own approval request is
still pending, a denial like a cancel writes, so the agent takes a normal message again. Nothing else needs
repair: a step commits its tool calls together with their returns, so a crash never leaves a call unanswered.
"""

import asyncio
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.locks import lock_key
from memlet.log import get_logger, log_fields
from memlet.loop.cancel import deny_pending
from memlet.net.outbound import OutboundPolicy
from memlet.runs.callbacks import dispatch_run_callback
from memlet.runs.repository import lease_deadline
from memlet.turns.chunk_log import end_log

log = get_logger("runs.lifecycle")

ACTIVE = ("created", "running")
INTERRUPTED = "RunInterrupted"
SHUTDOWN_MESSAGE = "The server shut down before the run finished."
LOST_MESSAGE = "The server process running this run stopped (crash or restart) before the run finished."
DENIAL_REASON = "The server stopped before the run finished, so the tool call was denied."


def _liveness_key(worker_id: str) -> int:
    return lock_key(f"worker:{worker_id}")


async def hold_liveness(engine: AsyncEngine, worker_id: str) -> AsyncConnection:
    """Take this worker's liveness lock on a connection kept open for the worker's life (close it to let go)."""
    conn = await engine.connect()
    await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _liveness_key(worker_id)})
    await conn.commit()
    return conn


async def renew_leases(
    maker: async_sessionmaker[AsyncSession], worker_id: str, run_ids: Sequence[str], lease_s: float
) -> None:
    """Extend the leases of the runs this worker has in flight (one statement)."""
    if not run_ids:
        return
    async with maker() as session, session.begin():
        await session.execute(
            update(orm.Run)
            .where(orm.Run.id.in_(list(run_ids)), orm.Run.status.in_(ACTIVE))
            .values(worker_id=worker_id, lease_expires_at=lease_deadline(lease_s))
        )


async def _dead_workers(session: AsyncSession, worker_id: str) -> list[str]:
    """Workers owning active runs whose liveness lock is free: their process is gone."""
    owners = await session.scalars(
        select(orm.Run.worker_id)
        .where(orm.Run.status.in_(ACTIVE), orm.Run.worker_id.is_not(None), orm.Run.worker_id != worker_id)
        .distinct()
    )
    dead = []
    for owner in list(owners):
        # An xact-level try: it is let go when this transaction ends, so the check itself holds nothing.
        free = await session.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": _liveness_key(str(owner))})
        if free:
            dead.append(str(owner))
    return dead


async def find_orphans(
    maker: async_sessionmaker[AsyncSession], worker_id: str, lease_s: float, keep: Iterable[str] = ()
) -> list[str]:
    """Active runs nobody will finish (see the module docstring), except `keep` (this worker's own)."""
    async with maker() as session, session.begin():
        dead = await _dead_workers(session, worker_id)
        r = orm.Run
        orphaned = or_(
            r.lease_expires_at < func.now(),
            r.worker_id.in_(dead),
            and_(r.worker_id.is_(None), r.created_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, lease_s)),
        )
        stmt = select(r.id).where(r.status.in_(ACTIVE), orphaned)
        if kept := list(keep):
            stmt = stmt.where(r.id.not_in(kept))
        return list(await session.scalars(stmt))


async def _close_one(maker: async_sessionmaker[AsyncSession], run_id: str, message: str) -> Actor | None:
    """Close one run if it is still active; returns who owns it (for its callback), None if it was not closed."""
    async with maker() as session, session.begin():
        run = await session.scalar(
            select(orm.Run).where(orm.Run.id == run_id, orm.Run.status.in_(ACTIVE)).with_for_update(skip_locked=True)
        )
        if run is None:
            return None
        run.status, run.stop_reason = "failed", "error"
        run.completed_at = datetime.now(UTC)
        run.lease_expires_at = None
        run.metadata_ = {**(run.metadata_ or {}), "error": {"type": INTERRUPTED, "message": message}}
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
