"""Async engine and session factory. Sessions are created per request (memlet.api.deps) or per loop phase."""

from typing import Any

import orjson
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from memlet.config import Settings


def async_url(uri: str) -> str:
    """Any Postgres URI (``postgres://``, ``postgresql://``, ``+psycopg``...) as an asyncpg SQLAlchemy URL."""
    url = make_url(uri.replace("postgres://", "postgresql://", 1))
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def create_engine(uri: str, settings: Settings) -> AsyncEngine:
    # orjson for JSONB columns: decoding agents' configs, tool schemas and message content dominated reads.
    return create_async_engine(
        async_url(uri),
        json_serializer=_json_dumps,
        json_deserializer=orjson.loads,
        pool_size=settings.pg_pool_size,
        max_overflow=settings.pg_max_overflow,
        pool_pre_ping=False,
        connect_args={"server_settings": {"application_name": "memlet", "jit": "off"}},
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
