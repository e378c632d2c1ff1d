"""Wire models for files and the files an agent sees (Letta 0.16.8 names, defaults and nulls)."""

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)
ProcessingStatus = Literal["pending", "parsing", "embedding", "completed", "error"]


class DuplicateFileHandling(StrEnum):
    """What an upload does when the folder already holds a file of that name."""

    SKIP = "skip"
    ERROR = "error"
    SUFFIX = "suffix"
    REPLACE = "replace"


class FileMetadata(BaseModel):
    """A file of a folder and how far its processing got."""

    model_config = _RESPONSE

    source_id: str
    file_name: str | None = None
    original_file_name: str | None = None
    file_path: str | None = None
    file_type: str | None = None
    file_size: int | None = None
    file_creation_date: str | None = None
    file_last_modified_date: str | None = None
    processing_status: ProcessingStatus = "pending"
    error_message: str | None = None
    total_chunks: int | None = None
    chunks_embedded: int | None = None
    content: str | None = None
    id: str
    organization_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class AgentFileAttachment(BaseModel):
    """A file attached to an agent, open or closed."""

    model_config = _RESPONSE

    id: str
    file_id: str
    file_name: str
    folder_id: str
    folder_name: str
    is_open: bool
    last_accessed_at: datetime | None = None
    visible_content: str | None = None
    start_line: int | None = None
    end_line: int | None = None


class PaginatedAgentFiles(BaseModel):
    files: list[AgentFileAttachment]
    next_cursor: str | None = None
    has_more: bool
