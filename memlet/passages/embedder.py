"""`Embedder`: text → vectors for any stored embedding_config, the one entry point for passages and files.

    vectors = await embedder.embed_texts(embedding_config, ["some text", ...], org_id=actor.organization_id)

The URL is the config's `embedding_endpoint`, else its endpoint type's default (OpenAI's or Ollama's configured
base URL); the key is the one bound to that URL (a BYOK provider's or the environment's), none for any other
endpoint (`memlet.providers.endpoints`). The configured `embedding_model` is always the model asked for. Clients
are pooled per (endpoint type, URL, key) and connect through the outbound URL policy (`memlet.net`).
"""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.crypto import keyring_for
from memlet.errors import BadRequestError
from memlet.llm.embeddings import DIMENSIONS_MODELS, EmbeddingClient, embedding_client_for
from memlet.llm.pool import ClientPool
from memlet.net.outbound import policy_for
from memlet.providers.endpoints import OLLAMA_URL, EndpointKey, byok_keys, key_for
from memlet.providers.env_providers import env_keys
from memlet.providers.remote import normalize_base_url


def embedding_url(config: dict[str, Any], settings: Settings) -> str:
    """The base URL this embedding_config's requests go to."""
    given = config.get("embedding_endpoint")
    if isinstance(given, str) and given.strip():
        return given.strip()
    kind = str(config.get("embedding_endpoint_type") or "openai")
    if kind == "ollama":
        return settings.ollama_base_url or OLLAMA_URL
    if kind == "openai":
        return normalize_base_url(settings.openai_base_url)
    raise BadRequestError(f"INVALID_ARGUMENT: embedding_config.embedding_endpoint is required for type '{kind}'")


def requested_dimensions(config: dict[str, Any]) -> int | None:
    """The `dimensions` to ask for: only models that accept it get the configured size."""
    model = str(config.get("embedding_model") or "")
    dim = config.get("embedding_dim")
    if isinstance(dim, int) and dim > 0 and model.startswith(DIMENSIONS_MODELS):
        return dim
    return None


class Embedder:
    """Pooled embedding clients, one per endpoint; built once per app (`app.state.embedder`)."""

    def __init__(self, settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.pool: ClientPool[EmbeddingClient] = ClientPool(settings.llm_client_cache_size)
        self.policy = policy_for(settings)
        self.environment = env_keys(settings)
        self.keyring = keyring_for(settings)

    async def _byok_key(self, config: dict[str, Any], org_id: str | None) -> list[EndpointKey]:
        name = config.get("provider_name") if isinstance(config.get("provider_name"), str) else None
        handle = config.get("handle")
        if name is None and isinstance(handle, str) and "/" in handle:
            name = handle.split("/", 1)[0]
        if not name or org_id is None:
            return []
        return await byok_keys(self.sessionmaker, self.keyring, org_id, name)

    async def embed_texts(
        self,
        embedding_config: dict[str, Any],
        texts: list[str],
        *,
        org_id: str | None = None,
        batch_size: int | None = None,
    ) -> list[list[float]]:
        """One vector per text, in order, from the configured model (in requests of at most `batch_size` texts,
        the client's default without one; each retried)."""
        if not texts:
            return []
        model = embedding_config.get("embedding_model")
        if not isinstance(model, str) or not model:
            raise BadRequestError("INVALID_ARGUMENT: embedding_config.embedding_model is required")
        kind = str(embedding_config.get("embedding_endpoint_type") or "openai")
        url = embedding_url(embedding_config, self.settings)
        key = key_for(url, [*await self._byok_key(embedding_config, org_id), *self.environment])
        settings = self.settings

        def build() -> EmbeddingClient:
            return embedding_client_for(
                kind,
                url,
                key,
                settings.llm_timeout_s,
                settings.llm_max_retries,
                retry_base_delay_s=settings.llm_retry_base_delay_s,
                policy=self.policy,
            )

        async with self.pool.lease((kind, url, key), build) as client:
            return await client.embed(texts, model, requested_dimensions(embedding_config), batch_size)

    async def aclose(self) -> None:
        """Close every pooled client (at shutdown)."""
        await self.pool.aclose()
