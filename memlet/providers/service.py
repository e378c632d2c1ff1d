"""BYOK providers: create, read, list, update, delete, key checks and model refreshes (`/v1/providers`).

Keys are stored encrypted when MEMLET_ENCRYPTION_KEY is set (memlet.crypto), in clear otherwise, and never sent
back: the `Provider` wire model always serializes `api_key` / `access_key` as null.
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError
from memlet.providers.catalog import ModelCatalog
from memlet.providers.remote import ProviderSource, check_key, default_base_url
from memlet.providers.repository import ProviderRepository
from memlet.providers.schemas import Provider, ProviderCheck, ProviderCreate, ProviderUpdate

_EDITABLE = ("access_key", "region", "base_url", "api_version")


def _blank_to_none(value: Any) -> Any:
    # Letta treats an empty string in a provider request as "not given".
    return None if value == "" else value


class ProviderService:
    def __init__(self, session: AsyncSession, catalog: ModelCatalog) -> None:
        self.session = session
        self.catalog = catalog
        self.providers = ProviderRepository(session)

    async def _row(self, actor: Actor, provider_id: str) -> orm.Provider:
        row = await self.providers.get_or_404(actor.organization_id, provider_id)
        return row

    async def list(
        self, actor: Actor, page: Page, *, name: str | None = None, provider_type: str | None = None
    ) -> list[Provider]:
        """The organization's BYOK providers (env providers are not listed, as in Letta)."""
        rows = await self.providers.list(actor.organization_id, page, name=name, provider_type=provider_type)
        return [Provider.model_validate(r) for r in rows]

    async def get(self, actor: Actor, provider_id: str) -> Provider:
        return Provider.model_validate(await self._row(actor, provider_id))

    async def create(self, actor: Actor, req: ProviderCreate) -> Provider:
        """Store a BYOK provider and list its models once; an unreachable provider is still stored."""
        fields = {k: _blank_to_none(v) for k, v in req.model_dump().items()}
        if req.name in self.catalog.base_provider_names:
            raise BadRequestError(
                f"Provider name '{req.name}' conflicts with an existing base provider. Please choose a different name."
            )
        if await self.providers.find_by_name(actor.organization_id, req.name) is not None:
            raise ConflictError(f"Provider with name '{req.name}' already exists")
        base_url = default_base_url(req.provider_type, fields["base_url"])
        await self._check_url(base_url)
        keyring = self.catalog.keyring
        row = orm.Provider(
            id=ids.new_id(ids.Prefix.PROVIDER),
            organization_id=actor.organization_id,
            provider_category="byok",
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
            **{
                **fields,
                "base_url": base_url,
                "api_key": keyring.seal(fields["api_key"]),
                "access_key": keyring.seal(fields.get("access_key")),
            },
        )
        await self.providers.add(row)
        # Letta answers with the provider as first stored: `last_synced` is null even when its models were listed.
        created = Provider.model_validate(row)
        await self._sync(row)
        return created

    async def update(self, actor: Actor, provider_id: str, req: ProviderUpdate) -> Provider:
        """Change a provider's key and connection fields; fields left out or null keep their value."""
        row = await self._row(actor, provider_id)
        changes = {k: _blank_to_none(v) for k, v in req.model_dump(exclude_unset=True).items()}
        if changes.get("base_url") is not None:
            await self._check_url(default_base_url(row.provider_type, changes["base_url"]))
        keyring = self.catalog.keyring
        for name, value in changes.items():
            if value is not None and (name == "api_key" or name in _EDITABLE):
                setattr(row, name, default_base_url(row.provider_type, value) if name == "base_url" else value)
        # Every write stores the keys sealed with the current first key (plaintext rows from before included).
        row.api_key = keyring.reseal(row.api_key, f"API key of provider {row.name!r}")
        row.access_key = keyring.reseal(row.access_key, f"access key of provider {row.name!r}")
        row.last_updated_by_id = actor.user_id
        await self.session.flush()
        self.catalog.forget(row.id)
        return Provider.model_validate(row)

    async def delete(self, actor: Actor, provider_id: str) -> dict[str, str]:
        row = await self._row(actor, provider_id)
        await self.providers.delete(row)
        self.catalog.forget(provider_id)
        return {"message": f"Provider id={provider_id} successfully deleted"}

    async def check(self, req: ProviderCheck) -> dict[str, str]:
        """Verify a key before storing it, by listing the provider's models with it."""
        source = ProviderSource(
            name=req.provider_type,
            provider_type=req.provider_type,
            category="byok",
            base_url=default_base_url(req.provider_type, _blank_to_none(req.base_url)),
            api_key=req.api_key,
        )
        await self._check_url(source.base_url)
        await check_key(source, timeout_s=self.catalog.timeout_s, policy=self.catalog.outbound)
        return {"message": f"Valid api key for provider_type={req.provider_type}"}

    async def check_existing(self, actor: Actor, provider_id: str) -> dict[str, str]:
        row = await self._row(actor, provider_id)
        source = ProviderSource.from_row(row, self.catalog.keyring)
        await self._check_url(source.base_url)
        await check_key(source, timeout_s=self.catalog.timeout_s, policy=self.catalog.outbound)
        return {"message": f"Valid api key for provider_type={row.provider_type}"}

    async def refresh(self, actor: Actor, provider_id: str) -> Provider:
        """List a provider's models again now (new ones appear, gone ones disappear)."""
        row = await self._row(actor, provider_id)
        await self._sync(row)
        return Provider.model_validate(row)

    async def _check_url(self, base_url: str | None) -> None:
        """400 when the outbound URL policy refuses `base_url` (nothing is sent to it)."""
        if base_url:
            await self.catalog.outbound.check_url(base_url, "base_url")

    async def _sync(self, row: orm.Provider) -> None:
        if await self.catalog.refresh(row):
            row.last_synced = datetime.now(UTC)
            await self.session.flush()
