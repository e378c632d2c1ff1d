"""Per-agent advisory locks, so two requests to one agent never interleave, across processes and hosts."""

import hashlib

from sqlalchemy import BigInteger, bindparam, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from memlet.db.driver import DriverSQL, driver_of


def lock_key(agent_id: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_*`` derived from the agent id."""
    return int.from_bytes(hashlib.blake2b(agent_id.encode(), digest_size=8).digest(), "big", signed=True)


async def agent_xact_lock(session: AsyncSession, agent_id: str) -> None:
    """Hold the agent's lock until the current transaction ends (for short read-modify-write sections)."""
    await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_key(agent_id)})


# Built once, run on the driver connection: each request takes and releases its lock.
_TRY_LOCK = DriverSQL(select(func.pg_try_advisory_lock(bindparam("k", type_=BigInteger))))
_UNLOCK = DriverSQL(select(func.pg_advisory_unlock(bindparam("k", type_=BigInteger))))


async def _autocommit_scalar(conn: AsyncConnection, statement: DriverSQL, key: int) -> bool:
    """Run one session-lock statement with no transaction: asyncpg sends a lone statement as it is, so it commits
    by itself (a session lock outlives transactions anyway), with no BEGIN and COMMIT round trips and no change of
    SQLAlchemy's isolation level. `conn` must have no transaction open; SQLAlchemy opens none for it either."""
    if conn.in_transaction():
        raise RuntimeError("a session lock statement needs a connection with no transaction open")
    driver = await driver_of(conn)
    return bool(await driver.fetchval(statement, {"k": key}))


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
