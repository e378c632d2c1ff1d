"""The agent-file services as FastAPI dependencies."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.agent_files.export_service import ExportService
from memlet.agent_files.import_service import ImportService
from memlet.api.deps import SessionDep, SettingsDep


async def get_import_service(request: Request, session: SessionDep, settings: SettingsDep) -> ImportService:
    return ImportService(session, request.app.state.catalog, request.app.state.rebuild_prompts, settings)


async def get_export_service(session: SessionDep) -> ExportService:
    return ExportService(session)


ImportServiceDep = Annotated[ImportService, Depends(get_import_service)]
ExportServiceDep = Annotated[ExportService, Depends(get_export_service)]
