"""Hybrid message search with message embeddings on (`embed_messages`): the background indexer embeds messages
after their turn, and search fuses the full-text and vector rankings by RRF (the mock's hashed bag-of-words
embeddings stand in for a model). `conversation_search` uses the same fusion."""

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import start_server
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
K = 60


@pytest.fixture
def server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    with start_server(settings, pg_uri, embed_messages=True, message_embedding_interval_s=0.05) as server:
        yield server


def search(http: httpx.Client, **body: Any) -> list[dict[str, Any]]:
    response = http.post("/v1/agents/messages/search", json=body)
    assert response.status_code == 200, response.text
    return list(response.json())


@pytest.fixture
def agent_id(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> str:
    mock_llm.reset()
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING).id
    for text, reply in (
        ("I love pancakes with syrup", "Pancakes are great!"),
        ("What about waffles?", "Waffles too."),
        ("Tell me about the weather", "It is sunny."),
    ):
        mock_llm.script(Reply.text(reply))
        client.agents.messages.create(agent, messages=[{"role": "user", "content": text}])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the indexer embeds the six messages in the background
        if len(search(http, query="anything", agent_id=agent, search_mode="vector", limit=100)) == 6:
            break
        time.sleep(0.05)
    else:
        pytest.fail("messages were not embedded")
    return agent


def expected_score(hit: dict[str, Any]) -> float:
    return sum(1 / (K + r) for r in (hit["fts_rank"], hit["vector_rank"]) if r is not None)


def test_hybrid_fuses_full_text_and_vector_ranks(http: httpx.Client, agent_id: str) -> None:
    hits = search(http, query="pancakes syrup", agent_id=agent_id)
    assert hits[0]["embedded_text"] == '{"content": "I love pancakes with syrup"}'
    assert (hits[0]["fts_rank"], hits[0]["vector_rank"]) == (1, 1)
    assert hits[0]["rrf_score"] == pytest.approx(2 / (K + 1))
    for hit in hits:
        assert hit["rrf_score"] == pytest.approx(expected_score(hit))
    assert [h["rrf_score"] for h in hits] == sorted((h["rrf_score"] for h in hits), reverse=True)
    # Vector neighbours without the words still come back, ranked by the vector alone.
    vector_only = [h for h in hits if h["fts_rank"] is None]
    assert vector_only and all(h["vector_rank"] for h in vector_only)
    assert {h["fts_rank"] for h in hits} >= {1, 2}


def test_each_mode_uses_its_own_ranking(http: httpx.Client, agent_id: str) -> None:
    fts = search(http, query="waffles", agent_id=agent_id, search_mode="fts")
    assert [(h["fts_rank"], h["vector_rank"]) for h in fts] == [(1, None), (2, None)]
    vector = search(http, query="waffles", agent_id=agent_id, search_mode="vector", limit=3)
    assert [(h["fts_rank"], h["vector_rank"]) for h in vector] == [(None, 1), (None, 2), (None, 3)]
    assert "waffles" in vector[0]["embedded_text"].lower()


def test_search_all_messages_is_hybrid(client: Letta, agent_id: str) -> None:
    results = client.messages.search(query="sunny weather", agent_id=agent_id, limit=2)
    assert [r.content for r in results] == ["It is sunny.", "Tell me about the weather"]  # type: ignore[union-attr]


def test_conversation_search_finds_vector_neighbours(client: Letta, agent_id: str) -> None:
    # No message holds "zzzq" as a word or substring: the text ranking is empty, the vector ranking is not.
    found = client.agents.tools.run(agent_id=agent_id, tool_name="conversation_search", args={"query": "zzzq"})
    assert found.status == "success"
    assert len(found.func_return["results"]) == 5  # type: ignore[index]
    lexical = client.agents.tools.run(
        agent_id=agent_id, tool_name="conversation_search", args={"query": "pancakes syrup", "limit": 1}
    )
    assert [r["content"] for r in lexical.func_return["results"]] == ["I love pancakes with syrup"]  # type: ignore[index]
