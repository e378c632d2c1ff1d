"""The message_embeddings table: messages still to embed, storing their vectors, and nearest-message search.

A search casts the dimensionless column to `vector(N)` and filters on `embedding_dim = N` (a literal), exactly as
the partial HNSW index `ix_message_embeddings_N` is defined, so the planner uses that index.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import ColumnElement, Select, bindparam, cast, exists, func, literal_column, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.driver import Driver, DriverSQL, driver_of
from memlet.db.models.passage import INDEXED_DIMS

M, E, A = orm.Message, orm.MessageEmbedding, orm.Agent
SEARCHABLE_ROLES = ("user", "assistant", "tool")
_EF_SEARCH = (40, 400)


@dataclass(frozen=True)
class PendingMessage:
    """A searchable message without a vector yet, with its text and its agent's embedding_config."""

    id: str
    sequence_id: int
    agent_id: str
    organization_id: str
    text: str
    embedding_config: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class MessageScope:
    """Which messages a search may return (the same filters as the text search)."""

    roles: Sequence[str]
    agent_id: str | None = None
    organization_id: str | None = None
    conversation_id: str | None = None
    start: datetime | None = None
    end: datetime | None = None

    def where(self) -> list[ColumnElement[bool]]:
        clauses: list[ColumnElement[bool]] = [M.role.in_(list(self.roles))]
        if self.agent_id is not None:
            clauses.append(M.agent_id == self.agent_id)
        if self.organization_id is not None:
            clauses.append(M.organization_id == self.organization_id)
        if self.conversation_id is not None:
            clauses.append(M.conversation_id == self.conversation_id)
        if self.start is not None:
            clauses.append(M.created_at >= self.start)
        if self.end is not None:
            clauses.append(M.created_at <= self.end)
        return clauses


def nearest_messages_statement(scope: MessageScope, model: str, vector: list[float], limit: int) -> Select[Any]:
    """Messages in scope whose vectors (of this model and dimension) are nearest to `vector`, nearest first."""
    dim = len(vector)
    distance = cast(E.embedding, Vector(dim)).cosine_distance(vector).label("distance")
    return (
        select(M, distance)
        .join(E, E.message_id == M.id)
        .where(E.embedding_dim == literal_column(str(int(dim))), E.embedding_model == model, *scope.where())
        .order_by(distance)
        .limit(limit)
    )


def _exact_statement(scope: MessageScope, model: str, vector: list[float], limit: int) -> Select[Any]:
    # The dimensionless column matches no index expression, so this ranks every row in scope exactly.
    distance = E.embedding.cosine_distance(vector).label("distance")
    return (
        select(M, distance)
        .join(E, E.message_id == M.id)
        .where(E.embedding_dim == len(vector), E.embedding_model == model, *scope.where())
        .order_by(distance, M.sequence_id.desc())
        .limit(limit)
    )


class MessageEmbeddingRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def pending(self, after_sequence_id: int, limit: int) -> list[PendingMessage]:
        """Searchable messages with text after `after_sequence_id` that have no vector and whose agent has an
        embedding_config of an indexed dimension, oldest first."""
        text_ = func.memlet_message_text(M.role, M.content, M.tool_calls)
        dim = A.embedding_config["embedding_dim"].as_integer()
        stmt = (
            select(M.id, M.sequence_id, M.agent_id, M.organization_id, text_, A.embedding_config, M.created_at)
            .join(A, A.id == M.agent_id)
            .outerjoin(E, E.message_id == M.id)
            .where(
                M.sequence_id > after_sequence_id,
                M.role.in_(SEARCHABLE_ROLES),
                E.message_id.is_(None),
                text_ != "",
                dim.in_(INDEXED_DIMS),
            )
            .order_by(M.sequence_id)
            .limit(limit)
        )
        return [PendingMessage(*row) for row in (await self.session.execute(stmt)).all()]

    async def add_many(self, rows: Sequence[dict[str, Any]]) -> None:
        """Store vectors (`message_id`, `agent_id`, `organization_id`, `embedding`, `embedding_dim`,
        `embedding_model`); a message embedded meanwhile keeps its first vector."""
        if rows:
            await self.session.execute(insert(E).values(list(rows)).on_conflict_do_nothing())

    async def configs_in_scope(self, scope: MessageScope) -> list[dict[str, Any]]:
        """The embedding_configs (one per model and dimension) of the scope's agents that have embedded messages.

        One indexed probe per agent (`ix_message_embeddings_agent_id`); with embeddings off it finds nothing."""
        return await self.configs_via(await driver_of(self.session), scope)

    @staticmethod
    async def configs_via(driver: Driver, scope: MessageScope) -> list[dict[str, Any]]:
        """`configs_in_scope` through `driver` (statements sent with no transaction, no session)."""
        stmt = _configs_statement(scope.agent_id is not None, scope.organization_id is not None)
        params = {"agent_id": scope.agent_id, "organization_id": scope.organization_id}
        found: dict[tuple[str, int], dict[str, Any]] = {}
        for (config,) in await driver.fetch(stmt, params):
            key = (str(config.get("embedding_model")), int(config.get("embedding_dim") or 0))
            found.setdefault(key, config)
        return list(found.values())

    async def nearest(
        self, scope: MessageScope, model: str, vector: list[float], limit: int
    ) -> list[tuple[orm.Message, float]]:
        """Up to `limit` messages nearest to `vector` (cosine) among those embedded by `model`."""
        ef_search = max(_EF_SEARCH[0], min(_EF_SEARCH[1], limit * 2))
        await self.session.execute(text(f"SET LOCAL hnsw.ef_search = {ef_search}"))
        rows = (await self.session.execute(nearest_messages_statement(scope, model, vector, limit))).all()
        if len(rows) < limit:  # the index's candidates were filtered away: rank the scope's vectors exactly
            rows = (await self.session.execute(_exact_statement(scope, model, vector, limit))).all()
        return [(row[0], float(row[1])) for row in rows]


@lru_cache(maxsize=4)
def _configs_statement(by_agent: bool, by_organization: bool) -> DriverSQL:
    """`configs_in_scope`'s statement, built once per scope shape (its values are bound); run on the driver (every
    `conversation_search` call asks it first)."""
    stmt = select(A.embedding_config).where(A.embedding_config.is_not(None), exists().where(E.agent_id == A.id))
    if by_agent:
        stmt = stmt.where(A.id == bindparam("agent_id"))
    if by_organization:
        stmt = stmt.where(A.organization_id == bindparam("organization_id"))
    return DriverSQL(stmt)
