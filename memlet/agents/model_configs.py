"""An agent's `llm_config` and `embedding_config` from a create or update request: a handle resolved through the
model catalog, or a client-given config normalized and its endpoint checked against the outbound URL policy."""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.schemas import CreateAgent, UpdateAgent


class ModelConfigs:
    def __init__(self, session: AsyncSession, catalog: Catalog) -> None:
        self.session = session
        self.catalog = catalog

    async def llm_config(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        settings = req.model_settings.model_dump(exclude_unset=True) if req.model_settings else None
        if req.model:
            return await self.catalog.resolve_llm(
                self.session,
                actor.organization_id,
                req.model,
                context_window_limit=req.context_window_limit,
                model_settings=settings,
            )
        if req.llm_config:
            config = self.catalog.normalize_llm_config(req.llm_config.model_dump(mode="json"))
            await self._check_endpoint(config, "model_endpoint", "llm_config.model_endpoint")
            if req.context_window_limit:
                config["context_window"] = req.context_window_limit
            return config
        return None

    async def embedding_config(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        if req.embedding:
            return await self.catalog.resolve_embedding(self.session, actor.organization_id, req.embedding)
        config = req.embedding_config.model_dump(mode="json") if req.embedding_config else None
        await self._check_endpoint(config, "embedding_endpoint", "embedding_config.embedding_endpoint")
        return config

    async def _check_endpoint(self, config: dict[str, Any] | None, key: str, field: str) -> None:
        """400 when the outbound URL policy refuses a client-given endpoint (memlet.net.outbound)."""
        url = (config or {}).get(key)
        if isinstance(url, str) and url:
            await self.catalog.outbound.check_url(url, field)
