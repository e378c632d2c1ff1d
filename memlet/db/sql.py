"""Small SQL helpers shared by the repositories."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ARRAY, String, func, literal
from sqlalchemy.sql.elements import ColumnElement


def escape_like(text: str) -> str:
    """`text` with LIKE's wildcards and escape character escaped (use with ``escape="\\\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def any_of(ids: Sequence[str]) -> ColumnElement[Any]:
    """``ANY($1)`` over one text-array parameter: unlike ``IN ($1, $2, ...)`` the statement text does not change
    with the number of ids, so Postgres and asyncpg keep one prepared statement for every page size."""
    return func.any(literal(list(ids), ARRAY(String)))
