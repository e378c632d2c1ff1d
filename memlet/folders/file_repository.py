"""SQL for files and their contents.

Status changes follow Letta's state machine in the UPDATE itself: pending → parsing → embedding → completed, error
from any unfinished state, and nothing leaves completed or error. A change the machine forbids updates nothing.
"""

from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.models.folder import UNFINISHED_STATUSES
from memlet.db.pagination import Page, fetch_page

F, C = orm.FileMetadata, orm.FileContent
# The statuses a file may be in before moving to each status.
_ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    "parsing": ("pending", "parsing", "embedding"),  # "embedding" only when a restart parses again
    "embedding": ("parsing", "embedding"),
    "completed": ("embedding",),
    "error": UNFINISHED_STATUSES,
}


class FileRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, row: orm.FileMetadata, raw: bytes) -> None:
        self.session.add(row)
        await self.session.flush()
        self.session.add(C(file_id=row.id, raw=raw))
        await self.session.flush()

    async def find(self, org_id: str, file_id: str) -> orm.FileMetadata | None:
        return await self.session.scalar(select(F).where(F.id == file_id, F.organization_id == org_id))

    async def find_by_original_name(self, source_id: str, original_name: str) -> orm.FileMetadata | None:
        stmt = select(F).where(F.source_id == source_id, F.original_file_name == original_name)
        return await self.session.scalar(stmt.order_by(F.created_at).limit(1))

    async def count_by_original_name(self, source_id: str, original_name: str) -> int:
        stmt = (
            select(func.count()).select_from(F).where(F.source_id == source_id, F.original_file_name == original_name)
        )
        return int(await self.session.scalar(stmt) or 0)

    async def name_taken(self, source_id: str, file_name: str) -> bool:
        return bool(await self.session.scalar(select(F.id).where(F.source_id == source_id, F.file_name == file_name)))

    async def list_page(self, source_id: str, page: Page) -> list[Any]:
        stmt = select(F).where(F.source_id == source_id)
        return await fetch_page(self.session, stmt, page, sort_col=F.created_at, id_col=F.id)

    async def of_source(self, source_id: str) -> list[orm.FileMetadata]:
        return list(await self.session.scalars(select(F).where(F.source_id == source_id).order_by(F.created_at)))

    async def texts(self, file_ids: list[str]) -> dict[str, str | None]:
        rows = await self.session.execute(select(C.file_id, C.text).where(C.file_id.in_(file_ids)))
        return {r[0]: r[1] for r in rows.all()}

    async def content(self, file_id: str) -> orm.FileContent | None:
        return await self.session.get(C, file_id)

    async def lock_key(self, file_id: str) -> bool:
        """Hold the file's row against a delete until the transaction ends (`FOR KEY SHARE`); False when it is gone."""
        return (
            await self.session.scalar(select(F.id).where(F.id == file_id).with_for_update(key_share=True))
        ) is not None

    async def lock_files_of(self, source_id: str) -> None:
        """Lock every file of the folder (in id order) for its delete."""
        await self.session.execute(select(F.id).where(F.source_id == source_id).order_by(F.id).with_for_update())

    async def set_text(self, file_id: str, text: str) -> None:
        await self.session.execute(update(C).where(C.file_id == file_id).values(text=text))

    async def drop_raw(self, file_id: str) -> None:
        await self.session.execute(update(C).where(C.file_id == file_id).values(raw=None))

    async def move(self, file_id: str, status: str, **fields: Any) -> bool:
        """Set `status` (and `fields`) if the state machine allows it from the current status."""
        stmt = (
            update(F)
            .where(F.id == file_id, F.processing_status.in_(_ALLOWED_FROM[status]))
            .values(processing_status=status, updated_at=func.now(), **fields)
            .returning(F.id)
        )
        return (await self.session.scalar(stmt)) is not None

    async def set_progress(self, file_id: str, **fields: Any) -> None:
        await self.session.execute(update(F).where(F.id == file_id).values(updated_at=func.now(), **fields))

    async def delete(self, file_id: str) -> None:
        await self.session.execute(delete(F).where(F.id == file_id))

    async def unfinished_ids(self) -> list[str]:
        """Files whose processing never finished (every organization), oldest first."""
        stmt = select(F.id).where(F.processing_status.in_(UNFINISHED_STATUSES)).order_by(F.created_at)
        return list(await self.session.scalars(stmt))
