"""Passages: archival memory of agents, passages of archives, semantic search (score = 1 − cosine distance).

Vectors come from the embedding_config of the agent (archival memory) or of the archive (archive passages),
stored at their true dimension; a dimension without an HNSW index is refused (400) rather than searched by a
full scan. Without an embedding_config a passage is stored without a vector and found by a case-insensitive
substring match, oldest first (Letta's search then).
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.archives.service import ArchiveService
from memlet.db import models as orm
from memlet.db.models.passage import INDEXED_DIMS
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.llm.tokens import count_tokens
from memlet.passages.embedder import Embedder
from memlet.passages.repository import PassageFilters, PassageRepository, PassageScope
from memlet.passages.schemas import PassageCreateRequest, PassageSearchRequest

# Letta's RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE: archival_memory_search's default top_k.
DEFAULT_TOP_K = 5
# Letta's archival_memory_token_limit: the most tokens `POST /v1/agents/{id}/archival-memory` stores in a passage.
ARCHIVAL_TOKEN_LIMIT = 8192
BYTES_PER_UNIT = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
Hit = tuple[orm.Passage, float]


def passage_not_found(passage_id: str) -> NotFoundError:
    return NotFoundError("Passage", passage_id, message=f"Passage with id '{passage_id}' not found")


def check_dimension(dim: int) -> None:
    if dim not in INDEXED_DIMS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Embedding dimension {dim} is not supported; "
            f"supported dimensions: {', '.join(map(str, INDEXED_DIMS))}"
        )


def utc(moment: datetime | None) -> datetime | None:
    """Naive datetimes are UTC."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def in_zone(moment: datetime | None, timezone: str | None) -> datetime | None:
    """Naive datetimes are in `timezone` (an agent's; UTC when it has none or an unknown one), as Letta reads them."""
    if moment is None or moment.tzinfo is not None:
        return moment
    try:
        return moment.replace(tzinfo=ZoneInfo(timezone or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        return moment.replace(tzinfo=UTC)


class PassageService:
    def __init__(self, session: AsyncSession, embedder: Embedder | None) -> None:
        self.session = session
        self.embedder = embedder
        self.passages = PassageRepository(session)
        self.archives = ArchiveService(session)

    async def embed(
        self, actor: Actor, config: dict[str, Any] | None, texts: list[str], *, batch_size: int | None = None
    ) -> Sequence[list[float] | None]:
        """One vector per text from `config` (None each when there is no embedding config), in requests of at most
        `batch_size` texts (the embedding client's default without one)."""
        if not config or self.embedder is None:
            return [None] * len(texts)
        vectors = await self.embedder.embed_texts(config, texts, org_id=actor.organization_id, batch_size=batch_size)
        for vector in vectors:
            check_dimension(len(vector))
        return vectors

    async def _store(
        self, actor: Actor, archive: orm.Archive, config: dict[str, Any] | None, items: list[PassageCreateRequest]
    ) -> list[orm.Passage]:
        vectors = await self.embed(actor, config, [item.text for item in items])
        rows = [
            orm.Passage(
                id=ids.new_id(ids.Prefix.PASSAGE),
                organization_id=actor.organization_id,
                archive_id=archive.id,
                text=item.text,
                embedding=vector,
                embedding_dim=len(vector) if vector is not None else None,
                embedding_config=config,
                metadata_=item.metadata or {},
                tags=item.tags,
                created_by_id=actor.user_id,
                last_updated_by_id=actor.user_id,
                **({"created_at": utc(item.created_at)} if item.created_at else {}),
            )
            for item, vector in zip(items, vectors, strict=True)
        ]
        await self.passages.add_many(rows)
        return rows

    # --- an agent's archival memory ---

    async def insert_for_agent(
        self,
        actor: Actor,
        agent_id: str,
        text: str,
        tags: list[str] | None,
        created_at: datetime | None = None,
        *,
        token_limit: int | None = None,
    ) -> list[orm.Passage]:
        """Store `text` in the agent's archival memory; over `token_limit` tokens (the REST insert's bound, as in
        Letta; the tool has none) it is a 400."""
        agent = await self.archives.agent(actor, agent_id)
        if token_limit is not None and (found := count_tokens(text)) > token_limit:
            raise BadRequestError(
                f"INVALID_ARGUMENT: Archival memory content exceeds token limit of {token_limit} tokens "
                f"(found {found} tokens)"
            )
        archive = await self.archives.default_for(actor, agent)
        try:  # the tool's arguments come unchecked; the route's body is checked already
            item = PassageCreateRequest(text=text, tags=tags, created_at=created_at)
        except ValidationError as exc:
            problems = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            raise BadRequestError(f"INVALID_ARGUMENT: {problems}") from exc
        return await self._store(actor, archive, agent.embedding_config, [item])

    async def agent_scope(self, actor: Actor, agent_id: str) -> PassageScope:
        await self.archives.agent(actor, agent_id)
        return PassageScope(archive_ids=[a.id for a in await self.archives.of_agent(agent_id)])

    async def list_for_agent(self, actor: Actor, agent_id: str, page: Page, search: str | None) -> list[orm.Passage]:
        scope = await self.agent_scope(actor, agent_id)
        return await self.passages.list_page(actor.organization_id, scope, page, search)

    async def delete_for_agent(self, actor: Actor, agent_id: str, passage_id: str) -> None:
        scope = await self.agent_scope(actor, agent_id)
        row = await self.passages.find(actor.organization_id, passage_id)
        if row is None or row.archive_id not in (scope.archive_ids or ()):
            raise passage_not_found(passage_id)
        await self.passages.delete(passage_id)

    async def search_agent(
        self, actor: Actor, agent: orm.Agent, query: str, filters: PassageFilters, top_k: int | None
    ) -> list[Hit]:
        """The agent's archival memory nearest to `query` (the REST search and the tool share this)."""
        if not query.strip():
            return []
        scope = PassageScope(archive_ids=[a.id for a in await self.archives.of_agent(agent.id)])
        return await self.search(actor, scope, agent.embedding_config, query, filters, top_k or DEFAULT_TOP_K)

    # --- archives ---

    async def create_in_archive(
        self, actor: Actor, archive_id: str, items: list[PassageCreateRequest]
    ) -> list[orm.Passage]:
        archive = await self.archives.get(actor, archive_id)
        return await self._store(actor, archive, archive.embedding_config, items)

    async def delete_from_archive(self, actor: Actor, archive_id: str, passage_id: str) -> None:
        await self.archives.get(actor, archive_id)
        row = await self.passages.find(actor.organization_id, passage_id)
        if row is None:
            raise passage_not_found(passage_id)
        if row.archive_id != archive_id:
            # Letta answers a passage of another archive with a 400 naming both, not a 404.
            raise BadRequestError(f"Passage {passage_id} does not belong to archive {archive_id}")
        await self.passages.delete(passage_id)

    # --- search ---

    async def search(
        self,
        actor: Actor,
        scope: PassageScope,
        config: dict[str, Any] | None,
        query: str,
        filters: PassageFilters,
        limit: int,
        *,
        with_embedding: bool = False,
    ) -> list[Hit]:
        """Nearest passages by the query's embedding (score 1 − cosine distance); without an embedding config, the
        passages holding the query (any case), oldest first, each scored 1.0, as Letta searches them."""
        org_id = actor.organization_id
        vector = (await self.embed(actor, config, [query]))[0] if query.strip() else None
        if vector is None:
            return [(row, 1.0) for row in await self.passages.substring_search(org_id, scope, filters, query, limit)]
        hits = await self.passages.nearest(org_id, scope, filters, vector, limit, with_embedding=with_embedding)
        return [(row, 1.0 - distance) for row, distance in hits]

    async def search_passages(
        self, actor: Actor, req: PassageSearchRequest, *, with_embedding: bool = False
    ) -> list[Hit]:
        """`POST /v1/passages/search`: an agent's archives, else one archive, else every archive of the org."""
        filters = PassageFilters(req.tags or (), req.tag_match_mode, utc(req.start_date), utc(req.end_date))
        config: dict[str, Any] | None
        if req.agent_id:
            agent = await self.archives.agent(actor, req.agent_id)
            scope, config = await self.agent_scope(actor, agent.id), agent.embedding_config
        elif req.archive_id:
            archive = await self.archives.get(actor, req.archive_id)
            scope, config = PassageScope(archive_ids=[archive.id]), archive.embedding_config
        else:
            scope, config = PassageScope(any_archive=True), await self.archives.latest_embedding_config(actor)
        if not req.query:  # Letta lists the oldest first
            page = Page(limit=req.limit, order="asc")
            rows = await self.passages.list_page(actor.organization_id, scope, page, None, filters)
            return [(row, 1.0) for row in rows]
        return await self.search(actor, scope, config, req.query, filters, req.limit, with_embedding=with_embedding)

    async def storage_size(self, actor: Actor, unit: str) -> float:
        if unit not in BYTES_PER_UNIT:
            raise BadRequestError(f"Invalid storage unit: {unit}. Must be one of {list(BYTES_PER_UNIT)}.")
        return await self.passages.embedding_bytes(actor.organization_id) / BYTES_PER_UNIT[unit]
