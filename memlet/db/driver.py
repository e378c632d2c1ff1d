"""Prebuilt statements run on the asyncpg connection beneath a SQLAlchemy connection, for the turn's hot path.

Through `AsyncConnection.execute` a prebuilt Core statement still costs about 120 us of CPU per call (the sync
execution layers, result adaptation); sent to asyncpg directly, the same SQL costs about 50. A `DriverSQL` is a
Core statement compiled once for asyncpg (``$n`` placeholders) with its parameters' order and SQLAlchemy's own bind
processors, so values are encoded as SQLAlchemy would encode them (JSONB through the engine's serializer, which
drops NULs and lone surrogates). A `Driver` runs them on the connection SQLAlchemy holds:

- inside SQLAlchemy's transaction: the BEGIN SQLAlchemy would send before its first statement is sent first, on
  the same asyncpg transaction object, so SQLAlchemy's COMMIT or ROLLBACK ends the driver's statements too;
- with no transaction open (a connection in autocommit, or one SQLAlchemy has not begun), each statement commits
  by itself, as asyncpg sends it;
- `before_cursor_execute` listeners see every statement (statement counters, tracing), as they would through
  SQLAlchemy, and errors come back as SQLAlchemy's exceptions (`IntegrityError`...), with a dropped connection
  invalidated as SQLAlchemy does.
"""

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.sql import ClauseElement
from sqlalchemy.util import greenlet_spawn

_Binder = Callable[[Mapping[str, Any]], Any]


def _column_default(default: Any) -> Callable[[], Any] | None:
    """A Python-side INSERT/UPDATE default of a column as a no-argument callable (None: none to compute here)."""
    if default is None:
        return None
    if default.is_callable:
        return lambda: default.arg(None)
    if default.is_scalar:
        return lambda: default.arg
    return None


class _SqlNull:
    """The value `SQL_NULL`: binds as SQL NULL whatever the column's type."""

    def __repr__(self) -> str:
        return "SQL_NULL"


# SQL NULL for any parameter. A None goes through the column type's processor as in SQLAlchemy: a JSON column then
# stores JSON ``null``, which is what the ORM writes for an attribute set to None, but not for one never set.
SQL_NULL: Any = _SqlNull()


def orm_insert_values(obj: Any, columns: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The values the ORM's INSERT of `obj` writes, by column name (`columns`: (attribute key, Column) pairs):
    each attribute set on it, else its column's Python default, else SQL NULL (`SQL_NULL`)."""
    state = inspect(obj).dict
    values: dict[str, Any] = {}
    for key, column in columns:
        if key in state:
            values[column.key] = state[key]
        elif (default := _column_default(column.default)) is not None:
            values[column.key] = state[key] = default()  # the ORM sets the defaults it wrote on the object too
        else:
            values[column.key] = SQL_NULL
    return values


class DriverSQL:
    """One Core statement as asyncpg SQL text, compiled on first use with each engine's dialect (its JSON
    serializer): the text, and per ``$n`` how to get its value from a dict of the bind parameters by name."""

    def __init__(self, statement: ClauseElement) -> None:
        self.statement = statement
        # Per dialect (one per engine): its JSON serializer is part of the bind processors.
        self._compiled: dict[Dialect, tuple[str, tuple[_Binder, ...]]] = {}

    def compiled(self, dialect: Dialect) -> tuple[str, tuple[_Binder, ...]]:
        compiled = self._compiled.get(dialect)
        if compiled is None:
            compiled = self._compiled[dialect] = self._compile(dialect)
        return compiled

    def _compile(self, dialect: Dialect) -> tuple[str, tuple[_Binder, ...]]:
        if not isinstance(dialect, PGDialect_asyncpg):
            raise TypeError("DriverSQL runs only on the asyncpg dialect")
        compiled: Any = self.statement.compile(dialect=dialect)
        processors = compiled._bind_processors
        prefetch = {col.key: col for col in (*compiled.insert_prefetch, *compiled.update_prefetch)}
        binders: list[_Binder] = []
        for name in compiled.positiontup:
            bind = compiled.binds[name]
            process = processors.get(name)
            if name in prefetch:  # a Python-side default (updated_at's onupdate...), unless the caller gives one
                column = prefetch[name]
                default = column.onupdate if column in compiled.update_prefetch else column.default
                binders.append(_prefetched(name, _column_default(default), process))
            elif bind.callable is None and not bind.required:  # a literal of the statement itself
                binders.append(_constant(process(bind.value) if process else bind.value))
            else:
                binders.append(_named(name, process))
        return compiled.string, tuple(binders)


def _constant(value: Any) -> _Binder:
    return lambda _params: value


def _named(name: str, process: Callable[[Any], Any] | None) -> _Binder:
    if process is None:
        return lambda params: None if (value := params[name]) is SQL_NULL else value
    return lambda params: None if (value := params[name]) is SQL_NULL else process(value)


def _prefetched(name: str, default: Callable[[], Any] | None, process: Callable[[Any], Any] | None) -> _Binder:
    def bind(params: Mapping[str, Any]) -> Any:
        value = params[name] if name in params or default is None else default()
        if value is SQL_NULL:
            return None
        return process(value) if process is not None else value

    return bind


class Driver:
    """The asyncpg connection beneath one SQLAlchemy connection, for `DriverSQL` statements (`driver_of`)."""

    def __init__(self, conn: Connection, adapted: Any) -> None:
        self._conn = conn
        self._adapted = adapted
        self._raw = adapted.driver_connection
        self._dialect = conn.dialect

    async def fetch(self, sql: DriverSQL, params: Mapping[str, Any]) -> list[Any]:
        """The rows (asyncpg Records) of `sql` with `params` (bind parameters by name)."""
        text, args = self._bound(sql, params)
        try:
            async with self._adapted._execute_mutex:  # one statement at a time on a connection, as in SQLAlchemy
                return list(await self._raw.fetch(text, *args))
        except Exception as error:
            await self._raise(error, text, args)
            raise  # unreachable: _raise always raises

    async def fetchrow(self, sql: DriverSQL, params: Mapping[str, Any]) -> Any:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: DriverSQL, params: Mapping[str, Any]) -> Any:
        """The first column of the first row, or None."""
        row = await self.fetchrow(sql, params)
        return row[0] if row is not None else None

    def _bound(self, sql: DriverSQL, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
        text, binders = sql.compiled(self._dialect)
        args = [bind(params) for bind in binders]
        conn = self._conn
        if conn._has_events or conn.engine._has_events:  # the listeners SQLAlchemy's own execution would call
            for listener in conn.dispatch.before_cursor_execute:
                listener(conn, None, text, tuple(args), None, False)
        return text, args

    async def _raise(self, error: Exception, text: str, args: Sequence[Any]) -> None:
        """Raise `error` as SQLAlchemy raises a driver error: translated (IntegrityError...) and, when the
        connection is gone, with the connection invalidated."""
        try:
            self._adapted._handle_exception(error)  # raises the DBAPI-level translation
        except Exception as dbapi_error:
            await greenlet_spawn(self._conn._handle_dbapi_exception, dbapi_error, text, tuple(args), None, None)


_SESSION_DRIVER = "memlet.driver"


async def driver_of(conn: AsyncConnection | AsyncSession) -> Driver:
    """The driver of `conn`, or of a session's connection (beginning its transaction as SQLAlchemy would; kept in
    the session for the rest of that transaction), with the transaction SQLAlchemy has begun started on the
    database (its BEGIN sent) if it was not yet."""
    if isinstance(conn, AsyncSession):
        transaction = conn.sync_session.get_transaction()
        kept = conn.info.get(_SESSION_DRIVER)
        if transaction is not None and kept is not None and kept[0] is transaction:
            driver: Driver = kept[1]
            return driver
        driver = await _driver(await conn.connection())
        conn.info[_SESSION_DRIVER] = (conn.sync_session.get_transaction(), driver)
        return driver
    return await _driver(conn)


async def _driver(conn: AsyncConnection) -> Driver:
    fairy = await conn.get_raw_connection()
    adapted: Any = fairy.dbapi_connection
    if conn.in_transaction() and adapted._transaction is None and not adapted.autocommit:
        async with adapted._execute_mutex:
            await adapted._start_transaction()
    return Driver(conn.sync_connection, adapted)  # type: ignore[arg-type]


@asynccontextmanager
async def lone_statements(maker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Driver]:
    """A driver for statements that are each atomic by themselves, sent with no transaction (no BEGIN, no COMMIT):
    on the connection `maker` is bound to (a turn's locked connection, which must have no transaction open), or on
    a connection of the engine it is bound to."""
    bind = maker.kw.get("bind")
    if isinstance(bind, AsyncEngine):
        async with bind.connect() as conn:
            yield await driver_of(conn)
        return
    if not isinstance(bind, AsyncConnection) or bind.in_transaction():
        raise TypeError("lone_statements needs an engine, or a connection with no transaction open")
    yield await driver_of(bind)
