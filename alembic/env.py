"""Async Alembic environment. The URL comes from the caller (memlet.migrations) or from memlet's Settings."""

import asyncio

from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from alembic import context
from memlet.config import Settings
from memlet.db import models  # noqa: F401  (registers every table on the metadata)
from memlet.db.base import Base
from memlet.db.engine import async_url

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or Settings().pg_uri
    if not url:
        raise RuntimeError(
            "No database URL: set MEMLET_PG_URI (or use `memlet db upgrade`, which starts the embedded one)"
        )
    return async_url(url)


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
