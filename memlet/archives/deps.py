"""The archives services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep
from memlet.archives.service import ArchiveService


async def get_archive_service(request: Request, session: SessionDep) -> ArchiveService:
    return ArchiveService(session, request.app.state.catalog)


ArchiveServiceDep = Annotated[ArchiveService, Depends(get_archive_service)]
