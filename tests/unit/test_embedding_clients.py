"""Embedding clients per endpoint type: Ollama's native /api/embed, batching, retries, the configured model."""

from collections.abc import Iterator

import pytest

from memlet.config import Settings
from memlet.llm.embeddings import OllamaEmbeddingClient, embedding_client_for, ollama_root
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
