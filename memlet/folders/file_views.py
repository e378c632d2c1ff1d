"""Stored files → wire `FileMetadata` (listing and reading show the name without its folder prefix, as Letta)."""

from memlet.db import models as orm
from memlet.folders.file_schemas import FileMetadata


def file_metadata(row: orm.FileMetadata, *, strip_prefix: bool = True, content: str | None = None) -> FileMetadata:
    name = row.file_name.split("/", 1)[1] if strip_prefix and "/" in row.file_name else row.file_name
    return FileMetadata(
        id=row.id,
        source_id=row.source_id,
        file_name=name,
        original_file_name=row.original_file_name,
        file_path=row.file_path,
        file_type=row.file_type,
        file_size=row.file_size,
        file_creation_date=row.file_creation_date,
        file_last_modified_date=row.file_last_modified_date,
        processing_status=row.processing_status,  # type: ignore[arg-type]
        error_message=row.error_message,
        total_chunks=row.total_chunks,
        chunks_embedded=row.chunks_embedded,
        content=content,
        organization_id=row.organization_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
