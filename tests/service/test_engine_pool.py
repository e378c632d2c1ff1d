"""Both engines hand out the connection returned last (LIFO): after a burst, sequential requests keep using one warm
Postgres backend instead of cycling through every idle connection of the pool."""

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from memlet.config import Settings
from memlet.db.engine import create_engine, create_turn_engine


async def _backend(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(text("SELECT pg_backend_pid()")) or 0)


@pytest.mark.parametrize("make", [create_engine, create_turn_engine])
async def test_sequential_checkouts_after_a_burst_reuse_the_last_connection(settings: Settings, make: object) -> None:
    engine = make(settings.pg_uri or "", settings)  # type: ignore[operator]
    try:
        async with engine.connect() as a, engine.connect() as b, engine.connect() as c:  # a burst: three connections
            burst = {int(await conn.scalar(text("SELECT pg_backend_pid()")) or 0) for conn in (a, b, c)}
        assert len(burst) == 3
        seen = [await _backend(engine) for _ in range(6)]
        assert len(set(seen)) == 1 and seen[0] in burst
    finally:
        await engine.dispose()
