"""The Alembic migrations are what builds every database: prove they go up from empty and back down to empty."""

import asyncio

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from memlet import migrations
from memlet.db.embedded import EmbeddedPostgres
from memlet.db.engine import async_url

CORE_TABLES = {
    "organizations",
    "users",
    "agents",
    "agents_tags",
    "blocks",
    "blocks_agents",
    "tools",
    "tools_agents",
    "messages",
    "runs",
    "steps",
    "identities",
    "identities_agents",
    "identities_blocks",
    "providers",
}


async def _tables(uri: str) -> set[str]:
    engine = create_async_engine(async_url(uri))
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
        names = {r[0] for r in rows}
        ext = await conn.scalar(text("SELECT count(*) FROM pg_extension WHERE extname = 'vector'"))
    await engine.dispose()
    return names | ({"<vector>"} if ext else set())


def test_upgrade_from_empty_and_downgrade_to_empty(embedded_pg: EmbeddedPostgres, pg_uri: str) -> None:
    embedded_pg.psql("DROP DATABASE IF EXISTS memlet_migrations; CREATE DATABASE memlet_migrations;")
    uri = make_url(pg_uri).set(database="memlet_migrations").render_as_string(hide_password=False)
    assert asyncio.run(_tables(uri)) == set()

    asyncio.run(migrations.upgrade(uri))
    after_up = asyncio.run(_tables(uri))
    assert after_up >= CORE_TABLES
    assert "<vector>" in after_up

    asyncio.run(migrations.downgrade(uri, "base"))
    assert asyncio.run(_tables(uri)) <= {"alembic_version", "<vector>"}

    asyncio.run(migrations.upgrade(uri))
    assert asyncio.run(_tables(uri)) >= CORE_TABLES


async def _storage(uri: str) -> dict[str, str]:
    engine = create_async_engine(async_url(uri))
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT attrelid::regclass::text, attstorage::text FROM pg_attribute"
                " WHERE attname = 'message_ids' AND attrelid IN ('agents'::regclass, 'conversations'::regclass)"
            )
        )
        found = {str(table): str(storage) for table, storage in rows}
    await engine.dispose()
    return found


def test_windows_are_stored_without_compression(pg_uri: str) -> None:
    """Every step appends to a window and Postgres writes the whole array again: a compression attempt on random
    ids fails and costs ~1 ms per 1,000 ids, so the windows are `EXTERNAL` (out of line, never compressed)."""
    assert asyncio.run(_storage(pg_uri)) == {"agents": "e", "conversations": "e"}
