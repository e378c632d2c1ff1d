"""Text embeddings: OpenAI-compatible `/v1/embeddings` and Ollama's native `/api/embed` (`memlet.llm.openai_http`).

Both clients embed in batches, retry each batch with the chat client's policy and always send the configured model
(no fallback to another one). A batch an OpenAI-compatible endpoint refuses as a bad request (400, 413, 422) is sent
again in halves, down to single texts, as Letta did: a server that takes fewer inputs per request still embeds
everything, and a text it refuses alone fails with the endpoint's error. `embedding_client_for` picks the client
for an `embedding_endpoint_type`.
"""

from functools import partial
from typing import Any, Protocol

from memlet.errors import BadRequestError
from memlet.llm.client import OPENAI_COMPATIBLE_ENDPOINTS
from memlet.llm.errors import LLMEmptyResponseError, check_sendable_endpoint
from memlet.llm.openai_http import OpenAIHTTP
from memlet.llm.retry import RetryPolicy, with_retries
from memlet.llm.wire_errors import ProviderStatusError
from memlet.net.outbound import OutboundPolicy

# Letta stores every embedding in one vector(4096) column, zero-padding shorter ones (its MAX_EMBEDDING_DIM).
MAX_EMBEDDING_DIM = 4096
# Models that accept OpenAI's `dimensions` parameter (Matryoshka embeddings); others always get their own size.
DIMENSIONS_MODELS = ("text-embedding-3",)
# Well under OpenAI's 2,048 inputs per request, and small enough for local servers.
DEFAULT_BATCH_SIZE = 128
# Statuses of a refused batch that may pass in smaller pieces (too many inputs or tokens in one request).
SPLIT_STATUSES = (400, 413, 422)


class EmbeddingClient(Protocol):
    """What passages and archival search need from an embedding model."""

    async def embed(
        self, texts: list[str], model: str, dimensions: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """One vector per text, in input order, asked for in requests of at most `batch_size` texts."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        ...


def pad_embedding(vector: list[float], dim: int = MAX_EMBEDDING_DIM) -> list[float]:
    """``vector`` zero-padded to ``dim`` entries (cosine distance is unchanged by the padding)."""
    if len(vector) > dim:
        raise ValueError(f"Embedding has {len(vector)} dimensions; at most {dim} are supported")
    return [*vector, *([0.0] * (dim - len(vector)))]


class OpenAICompatibleEmbeddingClient:
    """``EmbeddingClient`` over an OpenAI-compatible ``POST /embeddings``."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        batch_size: int = DEFAULT_BATCH_SIZE,
        policy: OutboundPolicy | None = None,
    ) -> None:
        self.retry = retry
        self.batch_size = batch_size
        self._http = OpenAIHTTP(base_url, api_key, timeout_s, policy)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def embed(
        self, texts: list[str], model: str, dimensions: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """Embed ``texts`` in batches of ``batch_size`` (the client's by default); each is retried on its own."""
        size = batch_size or self.batch_size
        vectors: list[list[float]] = []
        for start in range(0, len(texts), size):
            vectors.extend(await self._embed_or_split(texts[start : start + size], model, dimensions))
        return vectors

    async def _embed_or_split(self, batch: list[str], model: str, dimensions: int | None) -> list[list[float]]:
        """``batch`` embedded (retried on transient errors), or, refused as too large, its two halves."""
        try:
            return await with_retries(partial(self._embed_batch, batch, model, dimensions), self.retry)
        except Exception as exc:
            cause = exc.__cause__
            if len(batch) < 2 or not (isinstance(cause, ProviderStatusError) and cause.status_code in SPLIT_STATUSES):
                raise
        middle = len(batch) // 2
        first = await self._embed_or_split(batch[:middle], model, dimensions)
        return [*first, *await self._embed_or_split(batch[middle:], model, dimensions)]

    async def _embed_batch(self, batch: list[str], model: str, dimensions: int | None) -> list[list[float]]:
        # Explicit floats: the SDK's default base64 encoding is not supported by every local server.
        # Only text-embedding-3 style models accept `dimensions`, so it is omitted unless asked for.
        body: dict[str, Any] = {"input": batch, "model": model, "encoding_format": "float"}
        if dimensions:
            body["dimensions"] = dimensions
        response = await self._http.post("/embeddings", body)
        data = response.get("data") if isinstance(response, dict) else None
        if not isinstance(data, list) or not all(_is_embedding(item) for item in data):
            raise LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unusable embedding response: {str(response)[:500]}")
        data = sorted(data, key=lambda item: item.get("index", 0))
        _check_count(data, batch)
        return [[float(x) for x in item["embedding"]] for item in data]


def _is_embedding(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("embedding"), list)


def _check_count(vectors: list[Any], batch: list[str]) -> None:
    if len(vectors) != len(batch):
        raise LLMEmptyResponseError(
            f"INTERNAL_SERVER_ERROR: Embedding endpoint returned {len(vectors)} vectors for {len(batch)} inputs"
        )


def ollama_root(base_url: str) -> str:
    """Ollama's server root from a configured endpoint (`http://host:11434` or its OpenAI-style `.../v1`)."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1").removesuffix("/api")


class OllamaEmbeddingClient:
    """``EmbeddingClient`` over Ollama's native ``POST /api/embed`` (``{"model", "input": [...]}``).

    Requests go through the same HTTP layer as the chat calls (``memlet.llm.openai_http``), so timeouts, the
    outbound policy and error classes are the same as for every other provider call.
    """

    def __init__(
        self,
        *,
        base_url: str,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        batch_size: int = DEFAULT_BATCH_SIZE,
        policy: OutboundPolicy | None = None,
    ) -> None:
        self.retry = retry
        self.batch_size = batch_size
        self._http = OpenAIHTTP(ollama_root(base_url), None, timeout_s, policy)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def embed(
        self, texts: list[str], model: str, dimensions: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """Embed ``texts`` in batches; Ollama has no ``dimensions`` parameter, so the model's own size is used."""
        del dimensions
        size = batch_size or self.batch_size
        vectors: list[list[float]] = []
        for start in range(0, len(texts), size):
            batch = texts[start : start + size]
            vectors.extend(await with_retries(partial(self._embed_batch, batch, model), self.retry))
        return vectors

    async def _embed_batch(self, batch: list[str], model: str) -> list[list[float]]:
        body = await self._http.post("/api/embed", {"model": model, "input": batch})
        vectors = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(vectors, list):
            raise LLMEmptyResponseError("INTERNAL_SERVER_ERROR: Ollama /api/embed returned no embeddings")
        _check_count(vectors, batch)
        return [[float(x) for x in vector] for vector in vectors]


def embedding_client_for(
    endpoint_type: str,
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    max_retries: int = 3,
    *,
    retry_base_delay_s: float = 0.5,
    policy: OutboundPolicy | None = None,
) -> EmbeddingClient:
    """Build the embedding client for one of Letta's embedding endpoint types (``ollama``: the native API).

    For a user-given endpoint pass the outbound policy as `policy` and a key bound
    to that URL (`memlet.providers.endpoints.key_for`).
    """
    check_sendable_endpoint(base_url)
    retry = RetryPolicy(max_retries=max_retries, base_delay_s=retry_base_delay_s)
    if endpoint_type == "ollama":
        return OllamaEmbeddingClient(base_url=base_url, timeout_s=timeout_s, retry=retry, policy=policy)
    if endpoint_type not in OPENAI_COMPATIBLE_ENDPOINTS:
        raise BadRequestError(
            f"INVALID_ARGUMENT: Embedding endpoint type '{endpoint_type}' is not supported; "
            "use an OpenAI-compatible endpoint"
        )
    return OpenAICompatibleEmbeddingClient(
        base_url=base_url,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=retry,
        policy=policy,
    )
