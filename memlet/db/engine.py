"""Async engine and session factory. Sessions are created per request (memlet.api.deps) or per loop phase."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from memlet.config import Settings
from memlet.db.sql import storable_value
from memlet.log import get_logger, log_fields

log = get_logger("db.engine")


def async_url(uri: str) -> str:
    """Any Postgres URI (``postgres://``, ``postgresql://``, ``+psycopg``...) as an asyncpg SQLAlchemy URL."""
    url = make_url(uri.replace("postgres://", "postgresql://", 1))
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def json_text(value: Any) -> str:
    """JSONB text for a value. Requests with a NUL or a lone surrogate are refused at the edge, but a model's reply
    or a tool's output can hold them too, and Postgres cannot store either: NULs are dropped, lone surrogates
    become U+FFFD (the rare slow path, taken only when the fast dump fails or shows an escaped NUL)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        text = ""
    if text and "\\u0000" not in text:
        return text
    return orjson.dumps(storable_value(value), option=orjson.OPT_NON_STR_KEYS).decode()


def create_engine(uri: str, settings: Settings) -> AsyncEngine:
    """The API's engine: short request transactions."""
    return _engine(uri, "memlet", pool_size=settings.pg_pool_size, max_overflow=settings.pg_max_overflow)


# Idle turn connections kept open between bursts; the rest of a turn pool is overflow, closed when returned. A turn
# on a new connection pays Postgres a backend start, its catalog caches and a fresh prepare and plan of each of its
# statements: with 5 kept, 20 clients sending at once cost Postgres 12.6-13.5 ms of CPU per one-step send, with 20
# kept 5.0-6.0 ms (`bench/PROFILE.md`).
TURN_POOL_IDLE = 20


def create_turn_engine(uri: str, settings: Settings) -> AsyncEngine:
    """The turns' engine: each running turn holds one connection (its agent lock) for its whole length.

    Sized by ``max_concurrent_turns``, which the turn registry enforces before a turn starts, so a turn never waits
    for a connection here and never takes one from the API's pool.
    """
    limit = settings.max_concurrent_turns + 1  # + the worker's liveness connection (memlet.turns.lifecycle)
    idle = min(TURN_POOL_IDLE, limit)
    return _engine(uri, "memlet-turns", pool_size=idle, max_overflow=limit - idle)


def connection_budget(settings: Settings) -> int:
    """Connections one worker may open: the API pool, the turn pool, and its liveness connection."""
    return settings.pg_pool_size + settings.pg_max_overflow + settings.max_concurrent_turns + 1


async def warn_connection_budget(session: AsyncSession, settings: Settings) -> None:
    """Log when one worker's pools alone could exhaust the server's max_connections."""
    allowed = int(await session.scalar(text("SELECT current_setting('max_connections')::int")) or 0)
    budget = connection_budget(settings)
    if budget > allowed:
        log.warning(
            "pools may exceed Postgres max_connections",
            extra=log_fields(per_worker=budget, max_connections=allowed),
        )


def _engine(uri: str, application_name: str, *, pool_size: int, max_overflow: int) -> AsyncEngine:
    # orjson for JSONB columns: decoding agents' configs, tool schemas and message content dominated reads.
    # hide_parameters: a failing statement's error text names its SQL but never its values (agent secrets,
    # provider keys), so exceptions that reach logs or error handlers carry no data.
    return create_async_engine(
        async_url(uri),
        hide_parameters=True,
        json_serializer=json_text,
        json_deserializer=orjson.loads,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_pre_ping=False,
        # Last in, first out: sequential requests after a burst keep using the connection just returned, whose
        # Postgres backend has its caches and plans warm, instead of cycling through every idle one (FIFO); the idle
        # rest stay idle. Postgres CPU per one-step send after a 20-client burst (`bench_ab.py --burst 20`): 3.48 -> 3.16 ms.
        pool_use_lifo=True,
        connect_args={"server_settings": {"application_name": application_name, "jit": "off"}},
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


async def in_autocommit(session: AsyncSession) -> None:
    """Run `session`'s statements in autocommit, each atomic by itself, with no BEGIN and COMMIT round trips. Call it
    before the session's first statement, on a session bound to an engine (the connection's isolation level is
    reset when it goes back to the pool)."""
    await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


@asynccontextmanager
async def single_read(maker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session for one read-only statement, run in autocommit: a single SELECT is atomic by itself, so it needs
    no BEGIN and ROLLBACK round trips around it. Only for a sessionmaker bound to an engine (the connection's
    isolation level is reset when it goes back to the pool), never to a connection a caller keeps."""
    if not isinstance(maker.kw.get("bind"), AsyncEngine):
        raise TypeError("single_read needs a sessionmaker bound to an engine")
    async with maker() as session:
        await in_autocommit(session)
        yield session


@asynccontextmanager
async def single_statement(maker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session for one statement that is atomic by itself, a write too (an ``INSERT ... SELECT``), in autocommit as
    `single_read`: it commits as it runs, with no BEGIN and COMMIT round trips around it."""
    async with single_read(maker) as session:
        yield session


@asynccontextmanager
async def autocommit_session(maker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session in autocommit for statements that are each atomic by themselves (reads, or writes that need no
    transaction around them), on any sessionmaker: also one bound to a connection its caller keeps (a turn's locked
    connection, which must have no transaction open), set back to its default isolation level when the block ends.
    No BEGIN and COMMIT round trips. Pending ORM changes are written only if the caller commits the session."""
    conn = maker.kw.get("bind")
    if isinstance(conn, AsyncEngine):
        async with single_read(maker) as session:
            yield session
        return
    if not isinstance(conn, AsyncConnection) or conn.in_transaction():
        raise TypeError("autocommit_session needs an engine, or a connection with no transaction open")
    default = conn.default_isolation_level
    await conn.execution_options(isolation_level="AUTOCOMMIT")
    try:
        async with maker() as session:
            yield session
    finally:
        if conn.in_transaction():
            await conn.commit()  # ends SQLAlchemy's own record of the statement; nothing is sent in autocommit
        await conn.execution_options(isolation_level=default)
