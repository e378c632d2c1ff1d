"""Detached ORM rows from rows read on the driver (`memlet.db.driver`), for the turn's load.

A turn loads its agent, blocks and tools on every step. Through the ORM each of the three statements paid for the
ORM's execution context, result setup and identity map (~0.5 ms of CPU each, whatever the row count). Read in one
`DriverSQL` statement instead (`AgentRepository.find_with_memory`: the blocks and tools as arrays of anonymous
`row(...)`s, which asyncpg returns as tuples), `RowShape` turns each row into the same ORM instance a session would
have left after closing: every column set, no history, its identity key set (`make_transient_to_detached`), so
callers keep the model's attributes and types, and `Session.add` would make it persistent again.
"""

from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import Column, func
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.sql.elements import ColumnElement

from memlet.db.base import Base

M = TypeVar("M", bound=Base)


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
