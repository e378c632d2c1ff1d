"""Wire models for passages, archival memory and passage search (Letta 0.16.8 names, defaults and nulls).

`Passage.embedding` is left out of responses unless the client asks for it (`include_embedding=true`): it is
up to 1,536 floats per row and the SDK's type allows its absence.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from memlet.providers.schemas import EmbeddingConfig

_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)
# Letta refuses archival memory over 8,192 tokens; characters are a cheap, model-free bound of the same order.
MAX_PASSAGE_CHARS = 100_000
# Letta bounds neither; 500 characters (Letta's own tests store one that long) stay within a tag index entry.
MAX_TAGS, MAX_TAG_CHARS = 64, 500
Tags = list[str] | None


def tags_problem(tags: list[str]) -> str | None:
    """Why these tags cannot be stored, or None."""
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG_CHARS for t in tags):
        return f"tags: at most {MAX_TAGS} tags of at most {MAX_TAG_CHARS} characters"
    return None


def _clean_tags(tags: list[str] | None) -> list[str] | None:
    if tags is None:
        return None
    if problem := tags_problem(tags):
        raise ValueError(problem)
    return list(dict.fromkeys(tags))


def _clean_text(text: str) -> str:
    # Postgres text cannot hold NUL.
    return text.replace("\x00", "")


class Passage(BaseModel):
    model_config = _RESPONSE

    id: str
    text: str
    embedding: list[float] | None = None
    embedding_config: EmbeddingConfig | None = None
    archive_id: str | None = None
    source_id: str | None = None
    file_id: str | None = None
    file_name: str | None = None
    metadata: dict[str, Any] | None = Field(
        default_factory=dict, validation_alias=AliasChoices("metadata_", "metadata")
    )
    tags: list[str] | None = None
    is_deleted: bool = False
    organization_id: str | None = None
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class _PassageInput(BaseModel):
    model_config = _REQUEST

    text: str = Field(min_length=1, max_length=MAX_PASSAGE_CHARS)
    tags: Tags = None
    created_at: datetime | None = None

    _tags = field_validator("tags")(_clean_tags)
    _text = field_validator("text")(_clean_text)


class CreateArchivalMemory(_PassageInput):
    """`POST /v1/agents/{id}/archival-memory`."""


class PassageCreateRequest(_PassageInput):
    """`POST /v1/archives/{id}/passages` (and each item of the batch)."""

    metadata: dict[str, Any] | None = None


class PassageBatchCreateRequest(BaseModel):
    model_config = _REQUEST

    passages: list[PassageCreateRequest] = Field(min_length=1, max_length=1000)


class ArchivalMemorySearchResult(BaseModel):
    id: str
    timestamp: str
    content: str
    tags: list[str] = Field(default_factory=list)


class ArchivalMemorySearchResponse(BaseModel):
    results: list[ArchivalMemorySearchResult]
    count: int


class PassageSearchRequest(BaseModel):
    model_config = _REQUEST

    query: str | None = Field(default=None, max_length=MAX_PASSAGE_CHARS)
    agent_id: str | None = None
    archive_id: str | None = None
    tags: Tags = None
    tag_match_mode: Literal["any", "all"] = "any"
    limit: int = Field(default=50, ge=1, le=1000)
    start_date: datetime | None = None
    end_date: datetime | None = None

    _tags = field_validator("tags")(_clean_tags)


class PassageSearchResult(BaseModel):
    passage: Passage
    score: float
    metadata: dict[str, Any] = Field(default_factory=dict)
