"""Which database failures are the client's, which are an outage, and which are memlet's own bugs.

Only an outage is worth retrying, so only an outage answers 503 with ``Retry-After``:

    bad input (400)   SQLSTATE class 22 (data exception: NUL or untranslatable character, numeric value out of
                      range, invalid text representation, string too long...), class 54 (program limit exceeded:
                      an index row or a statement too large), and asyncpg's client-side refusals (a query
                      argument it cannot encode, more than 32767 bind parameters)
    outage (503)      no connection (refused, reset, closed, timed out, pool exhausted), SQLSTATE class 08
                      (connection exception), 53 (insufficient resources), 57P01-57P03 (shutting down,
                      cannot connect now), class 40 (serialization failure, deadlock: a retry succeeds)
    bug (500)         everything else (syntax errors, undefined columns...): logged, never worth a retry
"""

import asyncio
from collections.abc import Iterator
from typing import Literal

import asyncpg
from sqlalchemy import exc as sa_exc

Kind = Literal["bad_input", "unavailable", "bug"]

_BAD_INPUT_CLASSES = ("22", "54")
_UNAVAILABLE_CLASSES = ("08", "53", "40")
_UNAVAILABLE_STATES = frozenset({"57P01", "57P02", "57P03", "57014"})
_TOO_MANY_ARGUMENTS = "number of query arguments cannot exceed"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else (current.__cause__ or current.__context__)


def _sqlstate(exc: BaseException) -> str | None:
    state = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None)
    return state if isinstance(state, str) and len(state) == 5 else None


def classify(exc: BaseException) -> Kind:
    """Classify a database exception (SQLAlchemy's wrapper, the asyncpg error or a socket error)."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return "unavailable"
    for link in _chain(exc):
        state = _sqlstate(link)
        if state is not None:
            if state[:2] in _BAD_INPUT_CLASSES:
                return "bad_input"
            if state[:2] in _UNAVAILABLE_CLASSES or state in _UNAVAILABLE_STATES:
                return "unavailable"
            return "bug"
        if isinstance(link, asyncpg.exceptions._base.DataError) or _TOO_MANY_ARGUMENTS in str(link):
            return "bad_input"
        if isinstance(
            link,
            OSError
            | asyncio.TimeoutError
            | sa_exc.TimeoutError
            | asyncpg.exceptions.ConnectionDoesNotExistError
            | asyncpg.exceptions._base.InterfaceError,
        ):
            return "unavailable"
    return "bug"


def is_database_outage(exc: BaseException) -> bool:
    """True for an exception that is not a ``DBAPIError`` but means the database cannot be reached: the pool is
    exhausted, or the driver could not open a connection (refused, no socket file, unknown host, timed out)."""
    for link in _chain(exc):
        if isinstance(link, sa_exc.TimeoutError | asyncpg.exceptions.PostgresConnectionError):
            return True
        if isinstance(link, OSError | asyncio.TimeoutError) and _raised_by_driver(link):
            return True
    return False


def _raised_by_driver(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith(("asyncpg", "sqlalchemy")):
            return True
        tb = tb.tb_next
    return False
