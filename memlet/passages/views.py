"""Stored passages → wire `Passage` / search results (the vector only when the client asks for it)."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memlet.db import models as orm
from memlet.passages.schemas import ArchivalMemorySearchResult, Passage, PassageSearchResult


def passage(row: orm.Passage, *, include_embedding: bool = False) -> Passage:
    vector = [float(x) for x in row.embedding] if include_embedding and row.embedding is not None else None
    return Passage(
        id=row.id,
        text=row.text,
        embedding=vector,
        embedding_config=row.embedding_config,
        archive_id=row.archive_id,
        source_id=row.source_id,
        file_id=row.file_id,
        file_name=row.file_name,
        metadata=row.metadata_ or {},
        tags=None if row.tags is None else list(row.tags),
        organization_id=row.organization_id,
        created_by_id=row.created_by_id,
        last_updated_by_id=row.last_updated_by_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def passages(rows: Sequence[orm.Passage], *, include_embedding: bool = False) -> list[Passage]:
    return [passage(r, include_embedding=include_embedding) for r in rows]


def search_results(hits: Sequence[tuple[orm.Passage, float]], *, include_embedding: bool) -> list[PassageSearchResult]:
    return [PassageSearchResult(passage=passage(r, include_embedding=include_embedding), score=s) for r, s in hits]


def local_timestamp(moment: datetime, timezone: str | None) -> str:
    """Letta's archival timestamp: ISO in the agent's timezone, else `str()` of the stored UTC time."""
    if timezone:
        try:
            return moment.astimezone(ZoneInfo(timezone)).isoformat()
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return str(moment)


def archival_results(hits: Sequence[tuple[orm.Passage, float]], timezone: str | None) -> list[dict[str, Any]]:
    """What archival search returns per hit: id, timestamp, content, tags (the tool and the REST route)."""
    return [
        ArchivalMemorySearchResult(
            id=row.id, timestamp=local_timestamp(row.created_at, timezone), content=row.text, tags=list(row.tags or [])
        ).model_dump()
        for row, _ in hits
    ]
