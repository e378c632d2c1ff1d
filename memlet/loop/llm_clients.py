"""The LLM clients the loop uses: which URL and key an llm_config gets, and the pool that keeps them open.

The URL is the config's `model_endpoint` or its endpoint type's default; the key is the one bound to that URL
(the BYOK provider's named in the config, else the environment's), none for any other endpoint
(`memlet.providers.endpoints`). Connections obey the outbound URL policy (`memlet.net`). Clients are shared per
(endpoint type, URL, key) in a bounded LRU pool that closes the clients it drops once no request uses them.
"""

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.crypto import keyring_for
from memlet.errors import LLMError
from memlet.llm.anthropic_format import AnthropicOptions
from memlet.llm.client import AnthropicClient, LLMClient, OpenAICompatibleClient, check_endpoint_type, client_for
from memlet.llm.errors import mark_byok
from memlet.llm.pool import ClientPool
from memlet.llm.types import ChatEvent, ChatRequest, ChatResult
from memlet.net.outbound import policy_for
from memlet.providers.endpoints import EndpointKey, byok_keys, endpoint_url, key_for
from memlet.providers.env_providers import env_keys


class ByokClient:
    """The client of an llm_config on a BYOK provider: its errors read as Letta's do for a user's own key
    (`memlet.llm.errors.mark_byok`)."""

    def __init__(self, inner: OpenAICompatibleClient | AnthropicClient) -> None:
        self.inner = inner

    async def chat(self, request: ChatRequest) -> ChatResult:
        try:
            return await self.inner.chat(request)
        except LLMError as exc:
            mark_byok(exc)
            raise

    async def stream_chat(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        try:
            async with contextlib.aclosing(self.inner.stream_chat(request)) as events:
                async for event in events:
                    yield event
        except LLMError as exc:
            mark_byok(exc)
            raise


class LLMClients:
    """`async with clients(llm_config, org_id) as llm`: the client for that config, held open for the block."""

    def __init__(self, settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.pool: ClientPool[OpenAICompatibleClient | AnthropicClient] = ClientPool(settings.llm_client_cache_size)
        self.policy = policy_for(settings)
        self.environment = env_keys(settings)
        self.keyring = keyring_for(settings)  # BYOK keys may be stored sealed (MEMLET_ENCRYPTION_KEY)

    async def _byok_key(self, llm_config: dict[str, Any], org_id: str) -> list[EndpointKey]:
        """The key of the BYOK provider the config names, bound to that provider's base URL."""
        name = llm_config.get("provider_name")
        if llm_config.get("provider_category") != "byok" or not isinstance(name, str):
            return []
        return await byok_keys(self.sessionmaker, self.keyring, org_id, name)

    @asynccontextmanager
    async def __call__(self, llm_config: dict[str, Any], org_id: str) -> AsyncIterator[LLMClient]:
        endpoint_type = str(llm_config.get("model_endpoint_type") or "openai")
        check_endpoint_type(endpoint_type)
        base_url = endpoint_url(llm_config, self.settings)
        key = key_for(base_url, [*await self._byok_key(llm_config, org_id), *self.environment], endpoint_type)
        settings = self.settings

        def build() -> OpenAICompatibleClient | AnthropicClient:
            return client_for(
                endpoint_type,
                base_url,
                key,
                settings.llm_timeout_s,
                settings.llm_max_retries,
                retry_base_delay_s=settings.llm_retry_base_delay_s,
                policy=self.policy,
            )

        async with self.pool.lease((endpoint_type, base_url, key), build) as client:
            # One pooled Anthropic connection serves many agents; thinking and effort are per llm_config.
            bound = (
                client.bind(AnthropicOptions.from_llm_config(llm_config))
                if isinstance(client, AnthropicClient)
                else client
            )
            yield ByokClient(bound) if llm_config.get("provider_category") == "byok" else bound

    async def aclose(self) -> None:
        """Close every pooled client (at shutdown)."""
        await self.pool.aclose()
