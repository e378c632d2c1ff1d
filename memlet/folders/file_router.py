"""Files of a folder under `/v1/folders` and the deprecated `/v1/sources`: upload, list, retrieve, delete.

An upload is read from the request stream with its size limit enforced as it arrives (413), checked for a
supported type (415) and content (400), stored as `parsing`, and handed to the background processor once the
request's transaction has committed; the response is the file at `parsing`.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, BackgroundTasks, Path, Query, Request
from fastapi.responses import JSONResponse

from memlet.api.deps import ActorDep, SettingsDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.folders.deps import FileProcessorDep, FileServiceDep
from memlet.folders.file_schemas import DuplicateFileHandling, FileMetadata
from memlet.folders.file_views import file_metadata
from memlet.folders.router import folder_path
from memlet.folders.upload_body import read_upload
from memlet.ids import Prefix, id_pattern

FileIdParam = Annotated[
    str,
    Path(
        pattern=id_pattern(Prefix.FILE),
        min_length=41,
        max_length=41,
        description="The ID of the file in the format 'file-<uuid4>'",
    ),
]
_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "title": "Body_upload_file_to_folder",
                    "properties": {"file": {"type": "string", "format": "binary", "title": "File"}},
                    "required": ["file"],
                }
            }
        },
    }
}
FOLDER_FILE_OPS = {
    "upload": "upload_file_to_folder",
    "list": "list_files_for_folder",
    "retrieve": "retrieve_file",
    "delete": "delete_file_from_folder",
}
SOURCE_FILE_OPS = {
    "upload": "upload_file_to_source",
    "list": "list_source_files",
    "retrieve": "get_file_metadata",
    "delete": "delete_file_from_source",
}


def build_router(prefix: str, id_name: str, ops: dict[str, str], *, deprecated: bool) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=[prefix.strip("/")], deprecated=deprecated or None)
    # Letta's deprecated `/v1/sources` listings take no order and return the oldest first.
    listing_order: Literal["asc", "desc"] = "asc" if deprecated else "desc"
    FolderIdParam = Annotated[str, folder_path(id_name)]
    at = f"/{{{id_name}}}"  # the folder id segment, named as the prefix names it

    @router.post(f"{at}/upload", operation_id=ops["upload"], response_model=FileMetadata, openapi_extra=_UPLOAD_BODY)
    async def upload(
        folder_id: FolderIdParam,
        request: Request,
        background: BackgroundTasks,
        service: FileServiceDep,
        processor: FileProcessorDep,
        settings: SettingsDep,
        actor: ActorDep,
        duplicate_handling: DuplicateFileHandling = DuplicateFileHandling.SUFFIX,
        name: Annotated[str | None, Query(max_length=255)] = None,
    ) -> Any:
        """Upload a file to a folder; it is parsed and embedded in the background."""
        await service.folders.get(actor, folder_id)  # 404 before reading a body for nothing
        uploaded = await read_upload(request, settings.max_upload_bytes)
        accepted = await service.accept_upload(actor, folder_id, uploaded, duplicate_handling, name)
        view = file_metadata(accepted.file, strip_prefix=False)
        if accepted.skipped:
            return JSONResponse(view.model_dump(mode="json"), headers={"X-Upload-Result": "skipped"})
        background.add_task(processor.submit, accepted.file.id)
        return view

    @router.get(f"{at}/files", operation_id=ops["list"], response_model=list[FileMetadata])
    async def list_files(
        folder_id: FolderIdParam,
        service: FileServiceDep,
        actor: ActorDep,
        before: str | None = None,
        after: str | None = None,
        limit: PageLimit = 1000,
        order: Literal["asc", "desc"] = listing_order,
        order_by: Literal["created_at"] = "created_at",
        include_content: bool = False,
    ) -> Any:
        """List the files of a folder with their processing status, newest first by default (oldest first under `/v1/sources`, as Letta lists them there)."""
        rows = await service.list_page(actor, folder_id, Page(before=before, after=after, limit=limit, order=order))
        texts = await service.texts([r.id for r in rows]) if include_content else {}
        return [file_metadata(r, content=texts.get(r.id)) for r in rows]

    @router.get(f"{at}/files/{{file_id}}", operation_id=ops["retrieve"], response_model=FileMetadata)
    async def retrieve(
        folder_id: FolderIdParam,
        file_id: FileIdParam,
        service: FileServiceDep,
        actor: ActorDep,
        include_content: bool = False,
    ) -> Any:
        """Get one file of a folder, with its full text on request."""
        row = await service.get(actor, file_id, folder_id)
        texts = await service.texts([row.id]) if include_content else {}
        return file_metadata(row, content=texts.get(row.id))

    @router.delete(f"{at}/{{file_id}}", operation_id=ops["delete"], status_code=204)
    async def delete(folder_id: FolderIdParam, file_id: FileIdParam, service: FileServiceDep, actor: ActorDep) -> None:
        """Delete a file with its passages and the agents' file blocks."""
        await service.delete(actor, folder_id, file_id)

    return router


router = build_router("/folders", "folder_id", FOLDER_FILE_OPS, deprecated=False)
sources_router = build_router("/sources", "source_id", SOURCE_FILE_OPS, deprecated=True)
