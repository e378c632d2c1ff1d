"""SQL for passages: insert, list, delete, and nearest-neighbour search on the per-dimension HNSW indexes.

A semantic search filters on `embedding_dim = N` (a literal, so the partial index's predicate is provable) and
orders by `embedding::vector(N) <=> query`, the indexed expression. pgvector's HNSW scan yields at most
`hnsw.ef_search` candidates before the other filters (archive, tags, dates) apply, so a selective filter can
leave fewer than `limit` hits although more rows match; then the search is repeated exactly (no index
expression, so it runs on the filtered rows only). Filters therefore always apply before LIMIT.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    ColumnElement,
    ScalarSelect,
    Select,
    String,
    cast,
    delete,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page
from memlet.db.sql import escape_like

P = orm.Passage
# pgvector's default ef_search is 40; a larger limit needs at least that many candidates (1000 is its maximum).
MIN_EF_SEARCH, MAX_EF_SEARCH = 40, 1000


@dataclass(frozen=True)
class PassageScope:
    """Which passages a query sees: those of some archives, or of some folders (file passages)."""

    archive_ids: Sequence[str] | None = None
    source_ids: Sequence[str] | None = None
    any_archive: bool = False  # every archive passage of the organization

    def where(self, org_id: str) -> list[ColumnElement[bool]]:
        clauses: list[ColumnElement[bool]] = [P.organization_id == org_id]
        if self.archive_ids is not None:
            clauses.append(P.archive_id.in_(list(self.archive_ids)))
        elif self.source_ids is not None:
            clauses.append(P.source_id.in_(list(self.source_ids)))
        elif self.any_archive:
            clauses.append(P.archive_id.is_not(None))
        else:
            clauses.append(literal_column("false"))
        return clauses


@dataclass(frozen=True)
class PassageFilters:
    """Tag and date filters of the search endpoints and the archival_memory_search tool."""

    tags: Sequence[str] = ()
    tag_match_mode: Literal["any", "all"] = "any"
    start: datetime | None = None
    end: datetime | None = None

    def where(self) -> list[ColumnElement[bool]]:
        clauses: list[ColumnElement[bool]] = []
        if self.tags:
            wanted = cast(list(dict.fromkeys(self.tags)), ARRAY(String))
            clauses.append(P.tags.contains(wanted) if self.tag_match_mode == "all" else P.tags.overlap(wanted))
        if self.start is not None:
            clauses.append(P.created_at >= self.start)
        if self.end is not None:
            clauses.append(P.created_at <= self.end)
        return clauses


def nearest_statement(
    org_id: str, scope: PassageScope, filters: PassageFilters, vector: list[float], limit: int
) -> Select[Any]:
    """The indexed query: rows of the vector's dimension, nearest first (cosine distance as `distance`)."""
    dim = len(vector)
    distance = cast(P.embedding, Vector(dim)).cosine_distance(vector).label("distance")
    return (
        select(P, distance)
        .where(*scope.where(org_id), P.embedding_dim == literal_column(str(int(dim))), *filters.where())
        .order_by(distance)
        .limit(limit)
    )


def _exact_statement(
    org_id: str, scope: PassageScope, filters: PassageFilters, vector: list[float], limit: int
) -> Select[Any]:
    # The dimensionless column matches no index expression, so this ranks every filtered row exactly.
    distance = P.embedding.cosine_distance(vector).label("distance")
    return (
        select(P, distance)
        .where(*scope.where(org_id), P.embedding_dim == len(vector), *filters.where())
        .order_by(distance, P.id)
        .limit(limit)
    )


class PassageRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add_many(self, rows: Sequence[orm.Passage]) -> None:
        self.session.add_all(rows)
        await self.session.flush()

    async def find(self, org_id: str, passage_id: str) -> orm.Passage | None:
        return await self.session.scalar(select(P).where(P.id == passage_id, P.organization_id == org_id))

    async def delete(self, passage_id: str) -> None:
        await self.session.execute(delete(P).where(P.id == passage_id))

    async def list_page(
        self,
        org_id: str,
        scope: PassageScope,
        page: Page,
        search: str | None = None,
        filters: PassageFilters | None = None,
    ) -> list[Any]:
        stmt = select(P).where(*scope.where(org_id), *(filters.where() if filters else ()))
        if search:
            stmt = stmt.where(P.text.ilike(f"%{escape_like(search)}%", escape="\\"))
        return await fetch_page(self.session, stmt, page, sort_col=P.created_at, id_col=P.id)

    async def nearest(
        self,
        org_id: str,
        scope: PassageScope,
        filters: PassageFilters,
        vector: list[float],
        limit: int,
        *,
        with_embedding: bool = False,
    ) -> list[tuple[orm.Passage, float]]:
        """Up to `limit` passages nearest to `vector` (cosine), with their distances. Their own vectors are read
        only `with_embedding` (decoding them costs more than the index search)."""
        ef_search = max(MIN_EF_SEARCH, min(MAX_EF_SEARCH, limit * 2))
        await self.session.execute(text(f"SET LOCAL hnsw.ef_search = {ef_search}"))
        skip = () if with_embedding else (defer(P.embedding, raiseload=True),)
        stmt = nearest_statement(org_id, scope, filters, vector, limit).options(*skip)
        rows = (await self.session.execute(stmt)).all()
        if len(rows) < limit:
            stmt = _exact_statement(org_id, scope, filters, vector, limit).options(*skip)
            rows = (await self.session.execute(stmt)).all()
        return [(row[0], float(row[1])) for row in rows]

    async def substring_search(
        self, org_id: str, scope: PassageScope, filters: PassageFilters, query: str, limit: int
    ) -> list[orm.Passage]:
        """Passages whose text holds `query` (any case), oldest first: Letta's search without an embedding."""
        stmt = (
            select(P)
            .where(*scope.where(org_id), *filters.where(), P.text.ilike(f"%{escape_like(query)}%", escape="\\"))
            .order_by(P.created_at, P.id)
            .limit(limit)
        )
        return list(await self.session.scalars(stmt))

    async def text_search(
        self, org_id: str, scope: PassageScope, filters: PassageFilters, query: str, limit: int
    ) -> list[tuple[orm.Passage, float]]:
        """Full-text match of any query word, best `ts_rank` first (passages without a usable embedding)."""
        words = [w for w in query.split() if w.strip()]
        if not words:
            return []
        tsquery = func.to_tsquery("simple", " | ".join(func_quote(w) for w in words))
        document = func.to_tsvector("simple", P.text)
        rank = func.ts_rank(document, tsquery).label("rank")
        stmt = (
            select(P, rank)
            .where(*scope.where(org_id), *filters.where(), document.op("@@")(tsquery))
            .order_by(rank.desc(), P.created_at.desc(), P.id)
            .limit(limit)
        )
        return [(row[0], float(row[1])) for row in (await self.session.execute(stmt)).all()]

    async def agent_count_and_tags(self, org_id: str, agent_id: str) -> tuple[int, list[str]]:
        """How many passages the agent's archives hold, and their distinct tags (sorted): the prompt's lines."""
        row = (await self.session.execute(select(*agent_passage_stats(org_id, agent_id)))).one()  # one statement
        return int(row[0] or 0), list(row[1] or [])

    async def agent_count(self, org_id: str, agent_id: str) -> int:
        """How many passages the agent's archives hold (without `agent_count_and_tags`' tag scan)."""
        count, _ = agent_passage_stats(org_id, agent_id)
        return int(await self.session.scalar(select(count)) or 0)

    async def embedding_bytes(self, org_id: str) -> int:
        """Bytes of the organization's stored vectors (4 per dimension)."""
        total = await self.session.scalar(
            select(func.coalesce(func.sum(P.embedding_dim), 0) * 4).where(
                P.organization_id == org_id, P.embedding.is_not(None)
            )
        )
        return int(total or 0)


def agent_passage_stats(
    org_id: str | ColumnElement[str], agent_id: str | ColumnElement[str]
) -> tuple[ScalarSelect[Any], ScalarSelect[Any]]:
    """How many passages the agent's archives hold and their distinct tags (sorted, NULL without any), as two
    scalar subqueries to select with other things."""
    archives = select(orm.ArchiveAgent.archive_id).where(orm.ArchiveAgent.agent_id == agent_id)
    scope = [P.organization_id == org_id, P.archive_id.in_(archives)]
    count = select(func.count()).select_from(P).where(*scope).scalar_subquery()
    distinct = select(func.unnest(P.tags).label("tag")).where(*scope).distinct().subquery()
    tags = select(func.array_agg(aggregate_order_by(distinct.c.tag, distinct.c.tag))).scalar_subquery()
    return count, tags


def func_quote(word: str) -> str:
    """A query word as a tsquery lexeme literal (quotes doubled), so user text is never tsquery syntax."""
    return "'" + word.replace("'", "''").replace("\\", "\\\\") + "'"
