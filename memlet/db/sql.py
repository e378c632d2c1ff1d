"""Small SQL helpers shared by the repositories."""

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ARRAY, String, Text, bindparam, cast, func, literal, literal_column
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import UserDefinedType

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


def text_array(values: Sequence[str]) -> str:
    """`values` as one Postgres array literal (``{"a","b"}``), for a parameter cast to an array in SQL
    (`array_parameter`). asyncpg encodes a list parameter element by element, with an abstract-base-class check on
    each (~1 us apiece: 2 ms for a 1,000-row window's ids and versions); one string costs it nothing, and Postgres
    parses the literal in C."""
    joined = '","'.join(values)
    if "\\" in joined or joined.count('"') != 2 * max(len(values) - 1, 0):  # a value to escape: rare
        joined = '","'.join(v.replace("\\", "\\\\").replace('"', '\\"') for v in values)
    return '{"' + joined + '"}' if values else "{}"


def int_array(values: Sequence[int]) -> str:
    """`values` as one Postgres array literal (``{1,2}``); see `text_array`."""
    return "{" + ",".join(map(str, values)) + "}"


def array_parameter(name: str, item: Any) -> ColumnElement[Any]:
    """The bind parameter `name`, an array literal string (`text_array`, `int_array`), cast to an array of `item`."""
    return cast(bindparam(name, type_=Text), ARRAY(item))


class Xid(UserDefinedType[int]):
    """Postgres' `xid` (asyncpg reads it as an int)."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "XID"


def row_version(table: str) -> ColumnElement[int]:
    """The `xmin` of `table`'s row: Postgres gives every new version of a row (any INSERT or UPDATE, whoever runs
    it) a new one. Read as it is: a cast through text per row cost Postgres more than the statement's own work when
    the plan projects it on every row it scans."""
    return literal_column(f"{table}.xmin", type_=Xid())
