"""The agent request lock never goes back to the pool still held: a connection whose unlock fails is dropped."""

from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from memlet import ids
from memlet.db.engine import async_url
from memlet.db.locks import release_agent_session_lock, try_agent_session_lock
from memlet.loop import request_lock
from memlet.loop.request_lock import agent_request_lock, request_lock_name


@pytest.fixture
async def one_connection_pool(pg_uri: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(async_url(pg_uri), pool_size=1, max_overflow=0)
    yield engine
    await engine.dispose()


async def lock_is_free(pg_uri: str, agent_id: str) -> bool:
    """Whether another session can take the agent's request lock right now."""
    other = create_async_engine(async_url(pg_uri), poolclass=NullPool)
    try:
        async with other.connect() as conn:
            taken = await try_agent_session_lock(conn, request_lock_name(agent_id))
            if taken:
                await release_agent_session_lock(conn, request_lock_name(agent_id))
            return taken
    finally:
        await other.dispose()


async def test_a_failed_unlock_drops_the_connection(
    one_connection_pool: AsyncEngine, pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_id = ids.new_id(ids.Prefix.AGENT)

    async def broken_unlock(conn: AsyncConnection, name: str) -> bool:
        raise DBAPIError("SELECT pg_advisory_unlock(...)", None, RuntimeError("connection reset"))

    monkeypatch.setattr(request_lock, "release_agent_session_lock", broken_unlock)
    async with agent_request_lock(one_connection_pool, agent_id, 1.0) as conn:
        holder = await conn.scalar(text("SELECT pg_backend_pid()"))
    assert await lock_is_free(pg_uri, agent_id)  # its session ended, and the lock with it
    async with one_connection_pool.connect() as conn:
        assert await conn.scalar(text("SELECT pg_backend_pid()")) != holder  # the pool got a fresh connection


async def test_a_body_that_leaves_an_aborted_transaction_still_unlocks(
    one_connection_pool: AsyncEngine, pg_uri: str
) -> None:
    agent_id = ids.new_id(ids.Prefix.AGENT)
    with pytest.raises(DBAPIError):
        async with agent_request_lock(one_connection_pool, agent_id, 1.0) as conn:
            await conn.execute(text("SELECT 1 / 0"))  # the transaction is now aborted
    assert await lock_is_free(pg_uri, agent_id)
    # The next request for the agent gets the lock at once from the same pool.
    async with agent_request_lock(one_connection_pool, agent_id, 0.2):
        pass


class TestLockRoundTrips:
    async def test_lock_and_unlock_open_no_transaction(
        self, one_connection_pool: AsyncEngine, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Taking and releasing the request lock is two statements: no BEGIN, COMMIT or ROLLBACK around them."""
        simple_queries: list[str] = []
        execute = asyncpg.Connection.execute

        async def counting(self: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> str:
            simple_queries.append(query)
            return await execute(self, query, *args, **kwargs)  # type: ignore[arg-type]

        async with one_connection_pool.connect() as warm:  # the pool's first connect runs set-up queries
            await warm.scalar(text("SELECT 1"))
        monkeypatch.setattr(asyncpg.Connection, "execute", counting)
        async with agent_request_lock(one_connection_pool, ids.new_id(ids.Prefix.AGENT), 1.0):
            pass
        assert simple_queries == []

    async def test_transactions_inside_the_lock_still_roll_back(self, one_connection_pool: AsyncEngine) -> None:
        """The lock's statements run in autocommit; what the body runs on the connection is transactional again."""
        async with agent_request_lock(one_connection_pool, ids.new_id(ids.Prefix.AGENT), 1.0) as conn:
            await conn.execute(text("CREATE TEMP TABLE lock_probe (x int)"))
            await conn.rollback()
            exists = await conn.scalar(text("SELECT to_regclass('pg_temp.lock_probe') IS NOT NULL"))
        assert exists is False
