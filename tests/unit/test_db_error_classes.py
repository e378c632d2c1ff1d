"""memlet.db.errors: only an outage is retryable (503); the request's bad data is 400; anything else a bug (500)."""

import asyncpg
import pytest
from sqlalchemy import exc as sa_exc

from memlet.db.errors import classify, is_database_outage


def wrapped(orig: BaseException, *, invalidated: bool = False) -> sa_exc.DBAPIError:
    """What SQLAlchemy raises: a DBAPIError whose ``orig`` carries the SQLSTATE and whose cause is the driver's."""
    adapted = Exception(str(orig))
    adapted.sqlstate = getattr(orig, "sqlstate", None)  # type: ignore[attr-defined]
    adapted.__cause__ = orig
    return sa_exc.DBAPIError("SELECT 1", {}, adapted, connection_invalidated=invalidated)


@pytest.mark.parametrize(
    "orig",
    [
        asyncpg.exceptions.CharacterNotInRepertoireError("invalid byte sequence"),
        asyncpg.exceptions.UntranslatableCharacterError("unsupported Unicode escape sequence"),
        asyncpg.exceptions.NumericValueOutOfRangeError("integer out of range"),
        asyncpg.exceptions.InvalidTextRepresentationError("invalid input syntax"),
        asyncpg.exceptions.StringDataRightTruncationError("value too long"),
        asyncpg.exceptions.ProgramLimitExceededError("index row size exceeds maximum"),
        asyncpg.exceptions._base.DataError("invalid input for query argument $1 (value out of int64 range)"),
        asyncpg.exceptions._base.InterfaceError("the number of query arguments cannot exceed 32767"),
    ],
)
def test_data_errors_are_bad_input(orig: BaseException) -> None:
    assert classify(wrapped(orig)) == "bad_input"


@pytest.mark.parametrize(
    "orig",
    [
        ConnectionRefusedError(111, "Connection refused"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.exceptions.TooManyConnectionsError("too many clients already"),
        asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
        asyncpg.exceptions._base.InterfaceError("cannot perform operation: connection is closed"),
    ],
)
def test_connection_failures_are_unavailable(orig: BaseException) -> None:
    assert classify(wrapped(orig)) == "unavailable"


def test_invalidated_connection_is_unavailable() -> None:
    assert classify(wrapped(Exception("whatever"), invalidated=True)) == "unavailable"


@pytest.mark.parametrize(
    "orig",
    [
        asyncpg.exceptions.UndefinedColumnError('column "x" does not exist'),
        asyncpg.exceptions.PostgresSyntaxError("syntax error at or near"),
        RuntimeError("something unexpected"),
    ],
)
def test_everything_else_is_a_bug(orig: BaseException) -> None:
    assert classify(wrapped(orig)) == "bug"


def test_pool_timeout_is_an_outage() -> None:
    assert is_database_outage(sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached"))


def test_an_oserror_outside_the_driver_is_not_an_outage() -> None:
    with pytest.raises(FileNotFoundError) as info:
        raise FileNotFoundError(2, "No such file or directory")
    assert not is_database_outage(info.value)
