"""Hybrid message search: the text ranking fused with the vector ranking by reciprocal rank fusion (RRF).

    hits = await hybrid_search(session, embedder, query="pancakes", mode="hybrid", scope=scope, limit=10)

- The text ranking is `MessageRepository.search_via` (full-text on the GIN index, then substring-only matches).
- The vector ranking exists only where messages have vectors (`message_embeddings`, written in the background
  when `embed_messages` is on): the query is embedded with each embedding_config found among the scope's
  embedded agents (one per model and dimension) and the nearest messages come from that dimension's HNSW index.
- Each ranking gives a hit `1 / (60 + rank)`; a hit's `rrf_score` is the sum, best first, newest first on ties.
  `fts_rank` and `vector_rank` are the hit's 1-based positions in the rankings it appears in, None elsewhere.
- `mode="fts"` uses the text ranking only; `"vector"` the vector ranking only, or the text ranking when the scope
  has no vectors (so it still finds something); `"hybrid"` both. Without a query, every message in scope, newest
  first, with no ranks.

Only searchable messages count (`searchable_fields`); ranks are positions among them.
"""

import logging
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.driver import Driver, driver_of
from memlet.errors import MemletError
from memlet.messages.embedding_repository import MessageEmbeddingRepository, MessageScope
from memlet.messages.repository import MessageRepository
from memlet.messages.search_fields import searchable_fields

log = logging.getLogger(__name__)

RRF_K = 60
MAX_EMBEDDING_CONFIGS = 3
# Rows a ranking finds but search never shows are dropped after the query; fetch a margin.
_OVERFETCH = 2

SearchMode = Literal["vector", "fts", "hybrid"]


class QueryEmbedder(Protocol):
    """What embeds the query (`memlet.passages.embedder.Embedder` is one)."""

    async def embed_texts(
        self, embedding_config: dict[str, Any], texts: list[str], *, org_id: str | None = None
    ) -> list[list[float]]: ...


@dataclass
class Hit:
    row: orm.Message
    fields: dict[str, Any]
    fts_rank: int | None = None
    vector_rank: int | None = None
    rrf_score: float = 0.0


def _searchable(rows: list[orm.Message]) -> list[tuple[orm.Message, dict[str, Any]]]:
    return [(row, fields) for row in rows if (fields := searchable_fields(row)) is not None]


async def _vector_rankings(
    session: AsyncSession,
    embedder: QueryEmbedder,
    query: str,
    scope: MessageScope,
    org_id: str | None,
    limit: int,
    configs: list[dict[str, Any]] | None,
) -> list[list[orm.Message]]:
    repo = MessageEmbeddingRepository(session)
    rankings = []
    if configs is None:
        configs = await repo.configs_in_scope(scope)
    for config in configs[:MAX_EMBEDDING_CONFIGS]:
        try:
            vector = (await embedder.embed_texts(config, [query], org_id=org_id))[0]
        except MemletError as exc:  # the text ranking still answers
            log.warning("message search: query not embedded with %s: %s", config.get("embedding_model"), exc)
            continue
        hits = await repo.nearest(scope, str(config.get("embedding_model")), vector, limit)
        rankings.append([row for row, _ in hits])
    return rankings


async def hybrid_search(
    session: AsyncSession,
    embedder: QueryEmbedder | None,
    *,
    query: str | None,
    mode: SearchMode,
    scope: MessageScope,
    limit: int,
    org_id: str | None = None,
    configs: list[dict[str, Any]] | None = None,
) -> list[Hit]:
    """The best `limit` searchable messages in `scope` for `query` (see the module docstring).

    `configs`: the scope's embedding configs (`MessageEmbeddingRepository.configs_in_scope`) when the caller has
    read them already; None reads them here."""
    fetch = limit * _OVERFETCH
    rankings: list[list[orm.Message]] = []
    if query and embedder is not None and mode != "fts":
        rankings = await _vector_rankings(session, embedder, query, scope, org_id, fetch, configs)
    text_rows: list[orm.Message] = []
    if mode != "vector" or not rankings:
        text_rows = await _text_ranking(await driver_of(session), query, scope, fetch)
    return _fused(text_rows, rankings, query=query, limit=limit)


async def text_search(driver: Driver, *, query: str | None, scope: MessageScope, limit: int) -> list[Hit]:
    """`hybrid_search` of a scope without vectors (its embedding configs read empty): the text ranking alone, one
    statement on `driver` (sent with no transaction, no session)."""
    return _fused(await _text_ranking(driver, query, scope, limit * _OVERFETCH), [], query=query, limit=limit)


async def _text_ranking(driver: Driver, query: str | None, scope: MessageScope, fetch: int) -> list[orm.Message]:
    return await MessageRepository.search_via(
        driver,
        scope.agent_id,
        organization_id=scope.organization_id,
        conversation_id=scope.conversation_id,
        query=query,
        roles=scope.roles,
        start=scope.start,
        end=scope.end,
        limit=fetch,
    )


def _fused(
    text_rows: list[orm.Message], rankings: list[list[orm.Message]], *, query: str | None, limit: int
) -> list[Hit]:
    """The best `limit` hits of the text ranking and the vector rankings (RRF); without a query, the text rows in
    their order, with no ranks."""
    if not query:
        return [
            Hit(row, fields, rrf_score=1 / (RRF_K + n))
            for n, (row, fields) in enumerate(_searchable(text_rows)[:limit], start=1)
        ]
    hits: dict[str, Hit] = {}
    for rank, (row, fields) in enumerate(_searchable(text_rows), start=1):
        hits[row.id] = Hit(row, fields, fts_rank=rank, rrf_score=1 / (RRF_K + rank))
    for ranking in rankings:
        for rank, (row, fields) in enumerate(_searchable(ranking), start=1):
            hit = hits.setdefault(row.id, Hit(row, fields))
            hit.vector_rank = rank if hit.vector_rank is None else min(hit.vector_rank, rank)
            hit.rrf_score += 1 / (RRF_K + rank)
    ordered = sorted(hits.values(), key=lambda h: (-h.rrf_score, -h.row.sequence_id))
    return ordered[:limit]
