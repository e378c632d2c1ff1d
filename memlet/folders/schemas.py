"""Wire models for folders and sources (Letta 0.16.8 names, defaults and nulls)."""

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from memlet.providers.schemas import EmbeddingConfig

_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)
MAX_TEXT = 10_000


class Folder(BaseModel):
    """A folder of files that agents can attach."""

    model_config = _RESPONSE

    name: str
    description: str | None = None
    instructions: str | None = None
    metadata: dict[str, Any] | None = Field(default=None, validation_alias=AliasChoices("metadata_", "metadata"))
    id: str
    embedding_config: EmbeddingConfig
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Source(BaseModel):
    """The deprecated name of a folder, which also shows its vector store (`/v1/sources`, `AgentState.sources`)."""

    model_config = _RESPONSE

    name: str
    description: str | None = None
    instructions: str | None = None
    metadata: dict[str, Any] | None = Field(default=None, validation_alias=AliasChoices("metadata_", "metadata"))
    id: str
    embedding_config: EmbeddingConfig
    vector_db_provider: Literal["native", "tpuf", "pinecone"] = "native"
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class SourceCreate(BaseModel):
    model_config = _REQUEST

    name: str = Field(min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    instructions: str | None = Field(default=None, max_length=MAX_TEXT)
    metadata: dict[str, Any] | None = None
    embedding: str | None = Field(default=None, max_length=255)
    embedding_chunk_size: int | None = Field(default=None, ge=1, le=8192)
    embedding_config: EmbeddingConfig | None = None


class SourceUpdate(BaseModel):
    model_config = _REQUEST

    name: str | None = Field(default=None, min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    instructions: str | None = Field(default=None, max_length=MAX_TEXT)
    metadata: dict[str, Any] | None = None
    embedding_config: EmbeddingConfig | None = None


class FileStats(BaseModel):
    file_id: str
    file_name: str
    file_size: int | None = None


class SourceStats(BaseModel):
    source_id: str
    source_name: str
    file_count: int = 0
    total_size: int = 0
    files: list[FileStats] = Field(default_factory=list)


class OrganizationSourcesStats(BaseModel):
    total_sources: int = 0
    total_files: int = 0
    total_size: int = 0
    sources: list[SourceStats] = Field(default_factory=list)
