"""Embedding clients per endpoint type: Ollama's native /api/embed, batching, retries, the configured model."""

import math
from collections.abc import Iterator

import pytest

from memlet.config import Settings
from memlet.llm.embeddings import (
    MAX_EMBEDDING_DIM,
    OllamaEmbeddingClient,
    OpenAICompatibleEmbeddingClient,
    embedding_client_for,
    ollama_root,
    pad_embedding,
)
from memlet.llm.retry import RetryPolicy
from memlet.passages.embedder import embedding_url, requested_dimensions
from tests.mock_llm import MockLLM, Reply, hashed_embedding

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.01)


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLM]:
    mock = MockLLM.start()
    yield mock
    mock.stop()


@pytest.fixture
def mock(server: MockLLM) -> MockLLM:
    server.reset()
    return server


def root(mock: MockLLM) -> str:
    return mock.base_url.removesuffix("/v1")


class TestOllamaEmbeddings:
    async def test_native_api_in_batches_with_the_configured_model(self, mock: MockLLM) -> None:
        client = OllamaEmbeddingClient(base_url=root(mock), batch_size=2, retry=FAST_RETRY)
        texts = ["one fish", "two fish", "red fish"]
        vectors = await client.embed(texts, "nomic-embed-text", dimensions=1536)
        await client.aclose()
        assert [len(v) for v in vectors] == [768, 768, 768]
        assert vectors[2] == pytest.approx(hashed_embedding("red fish", 768))
        assert [r["model"] for r in mock.embedding_requests] == ["nomic-embed-text"] * 2
        assert all(r["_api"] == "ollama" for r in mock.embedding_requests)

    async def test_retries_a_server_error(self, mock: MockLLM) -> None:
        mock.script_embeddings(Reply.error(status=503))
        client = OllamaEmbeddingClient(base_url=root(mock) + "/v1", retry=FAST_RETRY)
        assert len(await client.embed(["hello"], "nomic-embed-text")) == 1
        await client.aclose()
        assert len(mock.embedding_requests) == 2

    def test_factory_picks_the_native_client_for_ollama(self) -> None:
        assert isinstance(embedding_client_for("ollama", "http://127.0.0.1:11434", None, 5), OllamaEmbeddingClient)
        assert ollama_root("http://h:11434/v1/") == "http://h:11434"


class TestEmbeddingConfig:
    def test_url_follows_config_then_type_defaults(self) -> None:
        settings = Settings(_env_file=None, openai_base_url="http://o.example/v1/")  # type: ignore[call-arg]
        assert embedding_url({"embedding_endpoint": "http://e.example/v1"}, settings) == "http://e.example/v1"
        assert embedding_url({"embedding_endpoint_type": "openai"}, settings) == "http://o.example/v1"
        assert embedding_url({"embedding_endpoint_type": "ollama"}, settings) == "http://localhost:11434/v1"

    def test_dimensions_only_for_models_that_take_them(self) -> None:
        assert requested_dimensions({"embedding_model": "text-embedding-3-small", "embedding_dim": 768}) == 768
        assert requested_dimensions({"embedding_model": "text-embedding-ada-002", "embedding_dim": 1536}) is None


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


class TestEmbeddings:
    async def test_similar_texts_are_closer(self, mock: MockLLM) -> None:
        embedder = embedding_client_for("openai", mock.base_url, None, timeout_s=5)
        cat, kitten, physics = await embedder.embed(
            ["the cat sat on the mat", "a cat sat on a warm mat", "quantum chromodynamics lecture notes"],
            model="text-embedding-3-small",
        )
        await embedder.aclose()
        assert len(cat) == 1536
        assert cosine(cat, kitten) > cosine(cat, physics) + 0.3

    async def test_batches_keep_order_and_dimensions(self, mock: MockLLM) -> None:
        embedder = OpenAICompatibleEmbeddingClient(base_url=mock.base_url, batch_size=2, retry=FAST_RETRY)
        texts = [f"passage number {word}" for word in ("one", "two", "three", "four", "five")]
        vectors = await embedder.embed(texts, model="text-embedding-3-small", dimensions=64)
        await embedder.aclose()
        assert len(mock.embedding_requests) == 3
        assert all(r["dimensions"] == 64 for r in mock.embedding_requests)
        for text, vector in zip(texts, vectors, strict=True):
            assert vector == pytest.approx(hashed_embedding(text, 64))

    async def test_retries_server_errors(self, mock: MockLLM) -> None:
        mock.script_embeddings(Reply.error(status=503))
        embedder = OpenAICompatibleEmbeddingClient(base_url=mock.base_url, retry=FAST_RETRY)
        vectors = await embedder.embed(["hello"], model="text-embedding-3-small")
        await embedder.aclose()
        assert len(vectors) == 1
        assert len(mock.embedding_requests) == 2

    def test_pad_embedding(self) -> None:
        padded = pad_embedding([0.6, 0.8])
        assert len(padded) == MAX_EMBEDDING_DIM
        assert padded[:2] == [0.6, 0.8]
        assert set(padded[2:]) == {0.0}
        with pytest.raises(ValueError, match="4097"):
            pad_embedding([0.0] * 4097)
