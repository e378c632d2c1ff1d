"""The text search of `MessageRepository.search_via` (every conversation_search): one statement per combination of
filters, built once, over the stored search columns (full-text through the GIN index, then substring matches)."""

import re
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from sqlalchemy import ARRAY, Integer, Select, String, any_, bindparam, func, literal, literal_column, select, union_all
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.sql.elements import ColumnClause

from memlet.db import models as orm
from memlet.db.driver import DriverSQL
from memlet.db.row_shape import RowShape

M = orm.Message


class SearchShape(NamedTuple):
    agent: bool
    organization: bool
    conversation: bool
    start: bool
    end: bool
    kind: Literal["all", "substring", "ranked"]


SEARCH_ROWS = RowShape(orm.Message)


@lru_cache(maxsize=64)
def search_statement(shape: SearchShape) -> DriverSQL:
    """`MessageRepository.search_via`'s statement for one combination of filters, built once: its values are bound."""
    return DriverSQL(_search_select(shape))


def _search_select(shape: SearchShape) -> Select[Any]:
    roles = any_(bindparam("roles", type_=ARRAY(String)))
    stmt = select(*SEARCH_ROWS.columns).where(M.role == roles, _NOT_SEARCH_CALL)
    for present, column, name in (
        (shape.agent, M.agent_id, "agent_id"),
        (shape.organization, M.organization_id, "organization_id"),
        (shape.conversation, M.conversation_id, "conversation_id"),
    ):
        if present:
            stmt = stmt.where(column == bindparam(name))
    if shape.start:
        stmt = stmt.where(M.created_at >= bindparam("start"))
    if shape.end:
        stmt = stmt.where(M.created_at <= bindparam("end"))
    limit = bindparam("limit", type_=Integer)
    if shape.kind == "all":
        return stmt.order_by(M.sequence_id.desc()).limit(limit)
    substring = _TEXT.ilike(bindparam("pattern", type_=String))
    if shape.kind == "substring":
        return stmt.where(substring).order_by(M.sequence_id.desc()).limit(limit)
    # Both rankings in one statement: the full-text matches (through the GIN index), best `ts_rank` first; then,
    # only when they do not fill `limit` (a one-time filter), the substring-only matches, newest first.
    tsq = func.to_tsquery(_SIMPLE, bindparam("terms", type_=String))
    best = (func.ts_rank(_TSVECTOR, tsq).desc(), M.sequence_id.desc())
    fts = (
        stmt.where(_TSVECTOR.op("@@")(tsq))
        .with_only_columns(M.id, func.row_number().over(order_by=best).label("pos"))
        .order_by(*best)
        .limit(limit)
        .cte("fts")
    )
    rest = (
        stmt.where(
            substring, M.id.not_in(select(fts.c.id)), select(func.count()).select_from(fts).scalar_subquery() < limit
        )
        .with_only_columns(M.id, (limit + func.row_number().over(order_by=M.sequence_id.desc())).label("pos"))
        .order_by(M.sequence_id.desc())
        .limit(limit)
    )
    ranked = union_all(select(fts.c.id, fts.c.pos), rest).subquery("ranked")
    return select(*SEARCH_ROWS.columns).join(ranked, ranked.c.id == M.id).order_by(ranked.c.pos).limit(limit)


def tsquery_terms(query: str) -> str:
    """A `to_tsquery` text matching any word of `query` as a word prefix ('' when it has no words)."""
    return " | ".join(f"{word}:*" for word in dict.fromkeys(_WORD.findall(query.lower())))


_WORD = re.compile(r"[^\W_]+")
_SIMPLE: ColumnClause[Any] = literal_column("'simple'::regconfig")
# The searchable text (`memlet_message_text`, migration `2026-11-23_message_search.py`) and its tsvector, as the
# generated columns of `2026-11-23_message_search_columns.py` store them (GIN index on `search_tsv`). Not mapped on
# the ORM entity: no other query reads them, and a loaded message would carry its text twice.
_TEXT: ColumnClause[Any] = literal_column("messages.search_text", String)
_TSVECTOR: ColumnClause[Any] = literal_column("messages.search_tsv", TSVECTOR)
# Calls to conversation_search are never results: no tool call of the message names it.
_NOT_SEARCH_CALL = func.coalesce(
    M.tool_calls.op("@>")(literal([{"function": {"name": "conversation_search"}}], JSONB)), False
).is_(False)
