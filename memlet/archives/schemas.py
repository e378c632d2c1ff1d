"""Wire models for archives (Letta 0.16.8 names, defaults and nulls)."""

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from memlet.providers.schemas import EmbeddingConfig

_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)


class Archive(BaseModel):
    """A named store of passages that one or more agents search."""

    model_config = _RESPONSE

    id: str
    name: str
    description: str | None = None
    vector_db_provider: Literal["native", "tpuf", "pinecone"] = "native"
    embedding_config: EmbeddingConfig | None = None
    metadata: dict[str, Any] | None = Field(default=None, validation_alias=AliasChoices("metadata_", "metadata"))
    organization_id: str
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime
    updated_at: datetime | None = None


class ArchiveCreateRequest(BaseModel):
    model_config = _REQUEST

    name: str = Field(min_length=1, max_length=255)
    embedding_config: EmbeddingConfig | None = Field(default=None, json_schema_extra={"deprecated": True})
    embedding: str | None = None
    description: str | None = Field(default=None, max_length=10_000)


class ArchiveUpdateRequest(BaseModel):
    model_config = _REQUEST

    name: str | None = Field(default=None, min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=10_000)
