"""What the agents domain needs from the model catalog (implemented by memlet.providers.catalog.ModelCatalog)."""

from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.crypto import Keyring
from memlet.net.outbound import OutboundPolicy


class Catalog(Protocol):
    """What the agent service needs from the model catalog (memlet.providers.catalog.ModelCatalog)."""

    outbound: OutboundPolicy
    keyring: Keyring

    @property
    def default_llm_handle(self) -> str | None: ...
    @property
    def default_embedding_handle(self) -> str | None: ...

    async def resolve_llm(
        self,
        session: AsyncSession,
        org_id: str,
        handle: str,
        *,
        context_window_limit: int | None = None,
        model_settings: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...
    async def resolve_embedding(self, session: AsyncSession, org_id: str, handle: str) -> dict[str, Any]: ...
    def model_settings_for(self, llm_config: dict[str, Any]) -> dict[str, Any]: ...
    def normalize_llm_config(self, llm_config: dict[str, Any]) -> dict[str, Any]: ...
    def apply_reasoning(
        self, llm_config: dict[str, Any], reasoning: bool | None, agent_type: str
    ) -> dict[str, Any]: ...
