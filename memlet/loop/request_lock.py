"""The per-request agent lock: one request at a time per agent, held on a dedicated connection.

The lock is a Postgres session-level advisory lock, so it holds across processes and hosts while the request
calls the LLM with no transaction open, and Postgres drops it by itself when the process dies. The connection
comes from the turn engine (`memlet.db.engine.create_turn_engine`), never from the pool that serves API requests,
so slow turns cannot starve plain reads.
"""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from memlet import metrics
from memlet.db.locks import release_agent_session_lock, try_agent_session_lock
from memlet.errors import AgentBusyError
from memlet.log import get_logger, log_fields

log = get_logger("loop.request_lock")

_LOCK_POLL_S = 0.05


def engine_of(maker: async_sessionmaker[AsyncSession]) -> AsyncEngine:
    """The engine a sessionmaker is bound to (the lock needs a raw connection of its own)."""
    bind = maker.kw.get("bind")
    if not isinstance(bind, AsyncEngine):
        raise TypeError("the loop's sessionmaker must be bound to an AsyncEngine")
    return bind


def request_lock_name(agent_id: str) -> str:
    """The lock key of a whole request.

    A key of its own: the short commit transactions (and REST writers) take agent_xact_lock(agent_id), which must
    not wait for a whole request, and must not deadlock against the request that holds this lock.
    """
    return f"{agent_id}:request"


async def _acquire(engine: AsyncEngine, agent_id: str, timeout_s: float) -> AsyncConnection:
    # Waiters give their connection back between tries, so a queue of requests for one agent cannot starve the
    # pool that the lock holder needs for its own steps.
    deadline = time.monotonic() + timeout_s
    while True:
        conn = await engine.connect()
        try:
            acquired = await try_agent_session_lock(conn, request_lock_name(agent_id))  # leaves no transaction open
        except BaseException:
            await _discard(conn)
            raise
        if acquired:
            return conn
        await conn.close()
        if time.monotonic() >= deadline:
            raise AgentBusyError(agent_id)
        await asyncio.sleep(_LOCK_POLL_S)


async def _discard(conn: AsyncConnection) -> None:
    """Close the connection for good instead of pooling it: it may still hold the session lock."""
    with contextlib.suppress(Exception):
        await conn.invalidate()
    with contextlib.suppress(Exception):
        await conn.close()


async def _release(conn: AsyncConnection, agent_id: str) -> None:
    """Unlock and pool the connection; if the unlock fails (an aborted transaction, a broken or cancelled
    connection), invalidate it so Postgres ends its session and with it the lock."""
    try:
        if conn.in_transaction():
            await conn.rollback()
        released = await release_agent_session_lock(conn, request_lock_name(agent_id))
    except BaseException as exc:
        log.warning("agent lock release failed; dropping its connection", extra=log_fields(agent_id=agent_id))
        await _discard(conn)
        if not isinstance(exc, Exception):
            raise
        return
    if not released:
        log.warning("agent lock was not held at release", extra=log_fields(agent_id=agent_id))
        await _discard(conn)
        return
    await conn.close()


@contextlib.asynccontextmanager
async def agent_request_lock(engine: AsyncEngine, agent_id: str, timeout_s: float) -> AsyncIterator[AsyncConnection]:
    """Hold the agent's request lock for the body, yielding the connection that holds it (no transaction open).

    Raises AgentBusyError after waiting `timeout_s`.
    """
    with metrics.timed_lock_wait():
        conn = await _acquire(engine, agent_id, timeout_s)
    try:
        yield conn
    finally:
        await _release(conn, agent_id)
