"""Files of a folder: accept an upload (name, type, duplicates), list, read, delete.

An accepted upload is stored at `parsing` with its bytes, as Letta answers an upload; `memlet.folders.processing`
parses and embeds it in the background. Deleting a file deletes its passages (foreign keys) and its file blocks,
and recompiles the system prompt of every agent that had it.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page, check_cursors
from memlet.errors import BadRequestError, MemletError, NotFoundError
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.file_schemas import DuplicateFileHandling
from memlet.folders.file_types import SUPPORTED_SUMMARY, stored_media_type, unsupported_upload
from memlet.folders.names import custom_file_name, safe_file_name, suffixed
from memlet.folders.service import FolderService
from memlet.folders.upload_body import UploadedFile
from memlet.prompt.rebuild import PromptRebuilder


class UnsupportedFileTypeError(MemletError):
    status_code = 415


def file_not_found(file_id: str) -> NotFoundError:
    return NotFoundError("File", file_id, message=f"File with id={file_id} not found")


@dataclass
class Accepted:
    file: orm.FileMetadata
    skipped: bool = False  # an existing file of that name, returned as is (duplicate_handling=skip)


class FileService:
    def __init__(self, session: AsyncSession, rebuild_prompts: PromptRebuilder) -> None:
        self.session = session
        self.rebuild_prompts = rebuild_prompts
        self.files = FileRepository(session)
        self.file_agents = FileAgentRepository(session)
        self.folders = FolderService(session, rebuild_prompts)

    async def accept_upload(
        self,
        actor: Actor,
        folder_id: str,
        upload: UploadedFile,
        duplicate_handling: DuplicateFileHandling,
        name: str | None,
    ) -> Accepted:
        folder = await self.folders.get(actor, folder_id)
        refused = unsupported_upload(upload.content_type, upload.file_name)
        if refused is not None:
            raise UnsupportedFileTypeError(
                f"Unsupported file type: {refused} (filename: {upload.file_name}). Supported types: {SUPPORTED_SUMMARY}."
            )
        original = custom_file_name(name) if name else safe_file_name(upload.file_name)
        existing = await self.files.find_by_original_name(folder.id, original)
        unique = original
        if existing is not None:
            if duplicate_handling is DuplicateFileHandling.ERROR:
                raise BadRequestError(f"INVALID_ARGUMENT: File '{original}' already exists in folder '{folder.name}'")
            if duplicate_handling is DuplicateFileHandling.SKIP:
                return Accepted(existing, skipped=True)
            if duplicate_handling is DuplicateFileHandling.REPLACE:
                await self._delete(existing)
            else:
                unique = await self._unique_name(folder, original)
        row = orm.FileMetadata(
            id=ids.new_id(ids.Prefix.FILE),
            organization_id=actor.organization_id,
            source_id=folder.id,
            file_name=f"{folder.name}/{unique}",
            original_file_name=original,
            file_type=stored_media_type(upload.content_type, original),
            file_size=len(upload.data),
            processing_status="parsing",  # as Letta stores (and answers) a new upload
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
        )
        await self.files.add(row, upload.data)
        return Accepted(row)

    async def _unique_name(self, folder: orm.Source, original: str) -> str:
        count = await self.files.count_by_original_name(folder.id, original)
        candidate = suffixed(original, count)
        while await self.files.name_taken(folder.id, f"{folder.name}/{candidate}"):
            count += 1
            candidate = suffixed(original, count)
        return candidate

    async def list_page(self, actor: Actor, folder_id: str, page: Page) -> list[orm.FileMetadata]:
        await self.folders.get(actor, folder_id)
        org = orm.FileMetadata.organization_id == actor.organization_id
        await check_cursors(self.session, page, orm.FileMetadata.id, "FileMetadata", org)
        return await self.files.list_page(folder_id, page)

    async def get(self, actor: Actor, file_id: str, folder_id: str | None = None) -> orm.FileMetadata:
        row = await self.files.find(actor.organization_id, file_id)
        if row is None:
            raise file_not_found(file_id)
        if folder_id is not None and row.source_id != folder_id:
            message = f"File with id={file_id} not found in folder {folder_id}"
            raise NotFoundError("File", file_id, message=message)
        return row

    async def texts(self, file_ids: Sequence[str]) -> dict[str, str | None]:
        return await self.files.texts(list(file_ids)) if file_ids else {}

    async def delete(self, actor: Actor, folder_id: str, file_id: str) -> None:
        await self.folders.get(actor, folder_id)
        await self._delete(await self.get(actor, file_id, folder_id))

    async def _delete(self, row: orm.FileMetadata) -> None:
        agent_ids = sorted(await self.file_agents.agent_ids_of_file(row.id))  # locked in the processor's order
        await self.files.delete(row.id)
        await self.session.flush()
        agents = [await self.session.get(orm.Agent, agent_id, with_for_update=True) for agent_id in agent_ids]
        await self.rebuild_prompts(self.session, [agent for agent in agents if agent is not None])
