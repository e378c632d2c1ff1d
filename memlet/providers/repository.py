"""SQL for BYOK providers (the rows behind `/v1/providers`); env-configured providers are never stored."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.pagination import Page, paginate
from memlet.errors import NotFoundError


class ProviderRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_or_404(self, org_id: str, provider_id: str) -> orm.Provider:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, provider_id)
        if row is None:
            raise NotFoundError("Provider", message=f"Provider not found with id='{provider_id}'")
        return row

    async def find(self, org_id: str, provider_id: str) -> orm.Provider | None:
        """The organization's provider with this id, or None."""
        return await self.session.scalar(
            select(orm.Provider).where(orm.Provider.organization_id == org_id, orm.Provider.id == provider_id)
        )

    async def find_by_name(self, org_id: str, name: str) -> orm.Provider | None:
        """The organization's provider with this name, or None (names are unique per organization)."""
        return await self.session.scalar(
            select(orm.Provider).where(orm.Provider.organization_id == org_id, orm.Provider.name == name)
        )

    async def list(
        self,
        org_id: str,
        page: Page | None = None,
        *,
        name: str | None = None,
        provider_type: str | None = None,
    ) -> Sequence[orm.Provider]:
        """The organization's providers, optionally filtered, newest first unless `page` says otherwise."""
        p = orm.Provider
        stmt: Select[Any] = select(p).where(p.organization_id == org_id)
        if name is not None:
            stmt = stmt.where(p.name == name)
        if provider_type is not None:
            stmt = stmt.where(p.provider_type == provider_type)
        stmt, reverse = paginate(stmt, page or Page(limit=None), sort_col=p.created_at, id_col=p.id)
        rows = list((await self.session.scalars(stmt)).all())
        return rows[::-1] if reverse else rows

    async def add(self, provider: orm.Provider) -> None:
        self.session.add(provider)
        await self.session.flush()

    async def delete(self, provider: orm.Provider) -> None:
        await self.session.delete(provider)
        await self.session.flush()
