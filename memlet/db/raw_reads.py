"""Hot reads run straight on the asyncpg driver under a session, for rows the caller only reads.

A turn loads its agent, blocks, tools and in-context messages on every step. Through the ORM each statement paid
for the ORM's execution context, result setup and identity map (the agent, blocks and tools: 1.5 ms of CPU in three
statements), and through a Core `execute` for SQLAlchemy's cursor and `Row` objects (the in-context rows: 0.5 ms
more per ~200 rows than the driver alone). `RawQuery` is a Core statement compiled once to the driver's SQL text
and run with asyncpg's `fetch` on the session's own connection, in its transaction when one has begun on the
driver (a read then sees the transaction's writes); before that, a read is a statement of its own, which under
READ COMMITTED sees what it would inside the transaction. JSONB comes back decoded by the connection's codec (the
engine's orjson), timestamps and arrays as SQLAlchemy returns them for these columns.

`RowShape` turns such a row (or an anonymous `row(...)` of a model's columns, which asyncpg returns as a tuple)
into a detached ORM instance, as if it had been loaded by a session since closed: every column set, no history,
its identity key set, so `Session.add` would make it persistent again. Only the hot reads use this; everything
else stays on the session.
"""

from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

import asyncpg
from sqlalchemy import Column, func
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement, ColumnElement

from memlet.db.base import Base

_DIALECT = PGDialect_asyncpg(paramstyle="numeric_dollar")
M = TypeVar("M", bound=Base)


class RawQuery:
    """A statement compiled once to asyncpg's `$n` SQL; run with named parameters on a session's connection.

    Parameters are passed to the driver as they are (no SQLAlchemy bind processing): strings, numbers and arrays
    of them, never values that need encoding (JSON)."""

    def __init__(self, statement: ClauseElement) -> None:
        compiled = statement.compile(dialect=_DIALECT)
        assert isinstance(compiled, SQLCompiler)
        self.sql = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())

    def _args(self, params: dict[str, Any]) -> list[Any]:
        return [params[name] for name in self.names]

    async def fetch(self, session: AsyncSession, **params: Any) -> list[asyncpg.Record]:
        driver = await driver_connection(session)
        return await driver.fetch(self.sql, *self._args(params))  # type: ignore[no-any-return]

    async def fetchrow(self, session: AsyncSession, **params: Any) -> asyncpg.Record | None:
        driver = await driver_connection(session)
        return await driver.fetchrow(self.sql, *self._args(params))


async def driver_connection(session: AsyncSession) -> asyncpg.Connection:
    """The asyncpg connection under the session's connection (checked out for the session, as any statement
    would)."""
    conn = await session.connection()
    fairy = await conn.get_raw_connection()
    driver = fairy.driver_connection
    assert isinstance(driver, asyncpg.Connection)
    return driver


class RowShape(Generic[M]):
    """A model's columns in mapper order: what to select, and the detached instance a selected row makes."""

    def __init__(self, model: type[M]) -> None:
        mapper = model.__mapper__
        self.model = model
        self.keys: tuple[str, ...] = tuple(attr.key for attr in mapper.column_attrs)
        self.columns: tuple[Column[Any], ...] = tuple(attr.columns[0] for attr in mapper.column_attrs)  # type: ignore[misc]
        self._new = mapper.class_manager.new_instance

    def __len__(self) -> int:
        return len(self.keys)

    def row(self) -> ColumnElement[Any]:
        """The columns as one anonymous `row(...)`, to aggregate into an array (asyncpg decodes each as a tuple)."""
        return func.row(*self.columns)

    def detached(self, values: Iterable[Any]) -> M:
        """A detached instance from a row's values in this shape's order (extra trailing values are ignored)."""
        instance: M = self._new()
        instance.__dict__.update(zip(self.keys, values, strict=False))
        make_transient_to_detached(instance)
        return instance

    def detached_all(self, rows: Sequence[Iterable[Any]] | None) -> list[M]:
        """`detached` of each row of an aggregated array (None, an empty aggregate, is no rows)."""
        return [self.detached(row) for row in rows or ()]
