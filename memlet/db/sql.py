"""Small SQL helpers shared by the repositories."""

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ARRAY, String, func, literal
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.selectable import TableValuedAlias

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """`text` as Postgres can store it: NULs dropped, lone surrogates (not encodable as UTF-8) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text.replace("\x00", ""))


def escape_like(text: str) -> str:
    """`text` with LIKE's wildcards and escape character escaped (use with ``escape="\\\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def storable_value(value: Any) -> Any:
    """A decoded JSON value with `storable_text` applied to every string in it, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_value(k): storable_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(v) for v in value]
    return value


def any_of(ids: Sequence[str]) -> ColumnElement[Any]:
    """``ANY($1)`` over one text-array parameter: unlike ``IN ($1, $2, ...)`` the statement text does not change
    with the number of ids, so Postgres and asyncpg keep one prepared statement for every page size."""
    return func.any(literal(list(ids), ARRAY(String)))


def array_rows(name: str | None = None, **columns: BindParameter[Any]) -> TableValuedAlias:
    """Rows from array parameters of equal length, one per column (``unnest($1, $2, ...)`` as a derived table with
    those column names): a batch of any size in one statement text."""
    return func.unnest(*columns.values()).table_valued(*columns).render_derived(name=name)
