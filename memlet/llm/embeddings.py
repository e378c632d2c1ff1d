"""Text embeddings from any OpenAI-compatible endpoint, batched, with the chat client's retry policy."""

from functools import partial
from typing import Protocol

import httpx2
import openai

from memlet.errors import BadRequestError
from memlet.llm.client import OPENAI_COMPATIBLE_ENDPOINTS, PLACEHOLDER_API_KEY
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.retry import RetryPolicy, with_retries

# Letta stores every embedding in one vector(4096) column, zero-padding shorter ones (its MAX_EMBEDDING_DIM).
MAX_EMBEDDING_DIM = 4096
# Well under OpenAI's 2,048 inputs per request, and small enough for local servers.
DEFAULT_BATCH_SIZE = 128


class EmbeddingClient(Protocol):
    """What passages and archival search need from an embedding model."""

    async def embed(self, texts: list[str], model: str, dimensions: int | None = None) -> list[list[float]]:
        """One vector per text, in input order."""
        ...


def pad_embedding(vector: list[float], dim: int = MAX_EMBEDDING_DIM) -> list[float]:
    """``vector`` zero-padded to ``dim`` entries (cosine distance is unchanged by the padding)."""
    if len(vector) > dim:
        raise ValueError(f"Embedding has {len(vector)} dimensions; at most {dim} are supported")
    return [*vector, *([0.0] * (dim - len(vector)))]


class OpenAICompatibleEmbeddingClient:
    """``EmbeddingClient`` over ``openai.AsyncOpenAI``'s /embeddings."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        batch_size: int = DEFAULT_BATCH_SIZE,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.retry = retry
        self.batch_size = batch_size
        self._sdk = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._sdk.close()

    async def embed(self, texts: list[str], model: str, dimensions: int | None = None) -> list[list[float]]:
        """Embed ``texts`` in batches of ``batch_size``; each batch is retried on its own."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vectors.extend(await with_retries(partial(self._embed_batch, batch, model, dimensions), self.retry))
        return vectors

    async def _embed_batch(self, batch: list[str], model: str, dimensions: int | None) -> list[list[float]]:
        # Explicit floats: the SDK's default base64 encoding is not supported by every local server.
        # Only text-embedding-3 style models accept `dimensions`, so it is omitted unless asked for.
        response = await self._sdk.embeddings.create(
            input=batch, model=model, encoding_format="float", dimensions=dimensions or openai.omit
        )
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise LLMEmptyResponseError(
                f"INTERNAL_SERVER_ERROR: Embedding endpoint returned {len(data)} vectors for {len(batch)} inputs"
            )
        return [list(item.embedding) for item in data]


def embedding_client_for(
    endpoint_type: str,
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    max_retries: int = 3,
    *,
    http_client: httpx2.AsyncClient | None = None,
) -> OpenAICompatibleEmbeddingClient:
    """Build the embedding client for one of Letta's embedding endpoint types.

    For a user-given endpoint pass `memlet.net.transport.guarded_client(...)` as `http_client` and a key bound
    to that URL (`memlet.providers.endpoints.key_for`).
    """
    if endpoint_type not in OPENAI_COMPATIBLE_ENDPOINTS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Embedding endpoint type '{endpoint_type}' is not supported; "
            "use an OpenAI-compatible endpoint"
        )
    return OpenAICompatibleEmbeddingClient(
        base_url=base_url,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=RetryPolicy(max_retries=max_retries),
        http_client=http_client,
    )
