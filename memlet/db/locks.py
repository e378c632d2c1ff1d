"""Per-agent advisory locks, so two requests to one agent never interleave, across processes and hosts."""

import hashlib

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession


def lock_key(agent_id: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_*`` derived from the agent id."""
    return int.from_bytes(hashlib.blake2b(agent_id.encode(), digest_size=8).digest(), "big", signed=True)


async def agent_xact_lock(session: AsyncSession, agent_id: str) -> None:
    """Hold the agent's lock until the current transaction ends (for short read-modify-write sections)."""
    await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_key(agent_id)})


# Built once: each request takes and releases its lock, and a `text()` is coerced and cache-keyed when built.
_TRY_LOCK = text("SELECT pg_try_advisory_lock(:k)")
_UNLOCK = text("SELECT pg_advisory_unlock(:k)")


async def _autocommit_scalar(conn: AsyncConnection, statement: TextClause, key: int) -> bool:
    """Run one session-lock statement in autocommit: no BEGIN and COMMIT round trips around it (a session lock
    outlives transactions anyway). `conn` must have no transaction open; it is left with none, at its default
    isolation level again, so the transactions that follow on it are ordinary ones."""
    default = conn.default_isolation_level
    await conn.execution_options(isolation_level="AUTOCOMMIT")
    try:
        result = await conn.execute(statement, {"k": key})
        return bool(result.scalar())
    finally:
        await conn.commit()  # ends SQLAlchemy's own record of the statement; nothing is sent in autocommit
        await conn.execution_options(isolation_level=default)


async def try_agent_session_lock(conn: AsyncConnection, agent_id: str) -> bool:
    """Try the session-level lock on a dedicated connection (held across LLM calls, no transaction open)."""
    return await _autocommit_scalar(conn, _TRY_LOCK, lock_key(agent_id))


async def release_agent_session_lock(conn: AsyncConnection, agent_id: str) -> bool:
    """Release the session-level lock; False when this connection did not hold it."""
    return await _autocommit_scalar(conn, _UNLOCK, lock_key(agent_id))


async def hold_session_lock(conn: AsyncConnection, name: str) -> None:
    """Take the session-level lock named `name` on `conn` and keep it until the connection closes."""
    await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": lock_key(name)})


async def lock_is_free(session: AsyncSession, name: str) -> bool:
    """Whether nobody holds the session-level lock `name` (an xact-level try, let go when the transaction ends)."""
    return bool(await session.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": lock_key(name)}))
