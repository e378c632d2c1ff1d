"""Reading a loaded ORM row fast: its ``__dict__`` holds every column value once the row is fully loaded."""

from typing import Any

from sqlalchemy import inspect

from memlet.db.base import Base

_COLUMNS: dict[type, frozenset[str]] = {}


def column_keys(model: type[Base]) -> frozenset[str]:
    """The attribute names of the model's mapped columns."""
    keys = _COLUMNS.get(model)
    if keys is None:
        keys = _COLUMNS[model] = frozenset(c.key for c in inspect(model).column_attrs)
    return keys


def complete(row: Base) -> bool:
    """Whether every column of the ORM row is loaded (none expired or deferred)."""
    return column_keys(type(row)) <= row.__dict__.keys()


def model_input(row: Base) -> Any:
    """The fastest input for a `from_attributes` pydantic model's `model_validate` of an ORM row: its ``__dict__``
    when every column is loaded (pydantic reads a dict ~3x faster than the row's instrumented attributes), else the
    row itself (an expired column then loads as it would)."""
    return row.__dict__ if complete(row) else row
