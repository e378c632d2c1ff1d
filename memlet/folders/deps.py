"""Services of a request for folders and files."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep
from memlet.folders.file_service import FileService
from memlet.folders.processing import FileProcessor
from memlet.folders.service import FolderService


async def get_folder_service(request: Request, session: SessionDep) -> FolderService:
    return FolderService(session, request.app.state.rebuild_prompts, request.app.state.catalog)


async def get_file_service(request: Request, session: SessionDep) -> FileService:
    return FileService(session, request.app.state.rebuild_prompts)


async def get_file_processor(request: Request) -> FileProcessor:
    return request.app.state.file_processor  # type: ignore[no-any-return]


FolderServiceDep = Annotated[FolderService, Depends(get_folder_service)]
FileServiceDep = Annotated[FileService, Depends(get_file_service)]
FileProcessorDep = Annotated[FileProcessor, Depends(get_file_processor)]
