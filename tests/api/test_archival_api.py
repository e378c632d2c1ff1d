"""Archival memory, archives and passage search through the official letta-client against the live server."""

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from letta_client import BadRequestError, Letta, NotFoundError

from tests.mock_llm import MockLLM

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def make_agent(client: Letta, name: str = "archivist", **kwargs: object):  # type: ignore[no-untyped-def]
    return client.agents.create(name=name, model=MODEL, embedding=EMBEDDING, **kwargs)  # type: ignore[arg-type]


class TestArchivalMemory:
    def test_insert_list_search_delete(self, client: Letta) -> None:
        agent = make_agent(client)
        created = client.agents.passages.create(agent.id, text="Postgres stores the event log", tags=["db"])
        client.agents.passages.create(agent.id, text="The cat sleeps on the warm sofa", tags=["pets"])
        client.agents.passages.create(agent.id, text="Lunch is at noon every Friday")
        assert len(created) == 1 and created[0].tags == ["db"] and created[0].embedding is None
        assert created[0].archive_id and created[0].embedding_config.embedding_model == "text-embedding-3-small"

        listed = client.agents.passages.list(agent.id)
        assert listed[0].text == "Postgres stores the event log"
        assert [p.text for p in client.agents.passages.list(agent.id, search="WARM")] == [
            "The cat sleeps on the warm sofa"
        ]
        first = client.agents.passages.list(agent.id, limit=1)
        after = client.agents.passages.list(agent.id, after=first[0].id, limit=5)
        assert [p.id for p in first + after] == [p.id for p in listed]

        found = client.agents.passages.search(agent.id, query="where does the cat sleep")
        assert found.count == 3 and found.results[0].content == "The cat sleeps on the warm sofa"

        client.agents.passages.delete(created[0].id, agent_id=agent.id)
        assert len(client.agents.passages.list(agent.id)) == 2
        with pytest.raises(NotFoundError):
            client.agents.passages.delete(created[0].id, agent_id=agent.id)

    def test_semantic_ranking_puts_shared_words_first(self, client: Letta) -> None:
        agent = make_agent(client)
        texts = [f"note {i} about weather and travel plans" for i in range(20)]
        texts.insert(7, "the quarterly budget spreadsheet for marketing")
        for text in texts:
            client.agents.passages.create(agent.id, text=text)
        found = client.agents.passages.search(agent.id, query="marketing budget spreadsheet", top_k=3)
        assert found.results[0].content == "the quarterly budget spreadsheet for marketing"
        assert len(found.results) == 3

    def test_limit_one_with_a_tag_returns_the_tagged_passage(self, client: Letta) -> None:
        agent = make_agent(client)
        for i in range(60):
            client.agents.passages.create(agent.id, text=f"the launch checklist item {i}")
        client.agents.passages.create(agent.id, text="an unrelated recipe for soup", tags=["kitchen"])
        found = client.agents.passages.search(agent.id, query="launch checklist", tags=["kitchen"], top_k=1)
        assert [r.content for r in found.results] == ["an unrelated recipe for soup"]
        assert found.results[0].tags == ["kitchen"]

    def test_tag_match_mode_and_dates(self, client: Letta) -> None:
        agent = make_agent(client)
        old = datetime.now(UTC) - timedelta(days=10)
        client.agents.passages.create(agent.id, text="old red apple", tags=["red", "fruit"], created_at=old)
        client.agents.passages.create(agent.id, text="new red car", tags=["red"])
        both = client.agents.passages.search(agent.id, query="red", tags=["red", "fruit"], tag_match_mode="all")
        assert [r.content for r in both.results] == ["old red apple"]
        anyof = client.agents.passages.search(agent.id, query="red", tags=["red", "fruit"], tag_match_mode="any")
        assert {r.content for r in anyof.results} == {"old red apple", "new red car"}
        recent = client.agents.passages.search(
            agent.id, query="red", start_datetime=datetime.now(UTC) - timedelta(days=1)
        )
        assert [r.content for r in recent.results] == ["new red car"]
        early = client.agents.passages.search(agent.id, query="red", end_datetime=datetime.now(UTC) - timedelta(days=1))
        assert [r.content for r in early.results] == ["old red apple"]

    def test_embedding_only_when_asked(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        client.agents.passages.create(agent.id, text="vector please")
        plain = http.get(f"/v1/agents/{agent.id}/archival-memory").json()
        full = http.get(f"/v1/agents/{agent.id}/archival-memory", params={"include_embedding": "true"}).json()
        assert plain[0]["embedding"] is None
        assert len(full[0]["embedding"]) == 1536
        # Search reads the stored vectors only when they are asked for.
        body = {"query": "vector", "agent_id": agent.id}
        found = http.post("/v1/passages/search", json=body).json()
        found_full = http.post("/v1/passages/search", json=body, params={"include_embedding": "true"}).json()
        assert found[0]["passage"]["embedding"] is None
        assert found_full[0]["passage"]["embedding"] == full[0]["embedding"]

    def test_prompt_metadata_counts_passages_and_lists_tags(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        client.agents.passages.create(agent.id, text="one", tags=["beta", "alpha"])
        client.agents.passages.create(agent.id, text="two")
        http.post(f"/v1/agents/{agent.id}/recompile")
        system = client.agents.retrieve(agent.id).system
        prompt = http.get(f"/v1/agents/{agent.id}/messages", params={"limit": 1, "order": "asc"}).json()
        text = str(prompt) + system
        assert "2 total memories you created are stored in archival memory" in text
        assert "Available archival memory tags: alpha, beta" in text

    def test_unknown_agent_404_and_bad_input_4xx(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.agents.passages.list("agent-00000000-0000-4000-8000-000000000000")
        agent = make_agent(client)
        with pytest.raises(Exception) as err:
            client.agents.passages.create(agent.id, text="")
        assert getattr(err.value, "status_code", 0) in (400, 422)


class TestArchives:
    def test_crud(self, client: Letta) -> None:
        archive = client.archives.create(name="facts", embedding=EMBEDDING, description="shared facts")
        assert archive.id.startswith("archive-") and archive.embedding_config.embedding_dim == 1536
        assert client.archives.retrieve(archive.id).name == "facts"
        assert client.archives.update(archive.id, name="facts2").name == "facts2"
        assert [a.id for a in client.archives.list(name="facts2")] == [archive.id]
        client.archives.delete(archive.id)
        with pytest.raises(NotFoundError):
            client.archives.retrieve(archive.id)

    def test_archive_shared_by_two_agents(self, client: Letta, http: httpx.Client) -> None:
        archive = client.archives.create(name="team", embedding=EMBEDDING)
        one = client.archives.passages.create(archive.id, text="the office wifi password is hunter2", tags=["it"])
        many = client.archives.passages.create_many(
            archive.id, passages=[{"text": "standup is at nine"}, {"text": "deploys happen on tuesday"}]
        )
        assert len(many) == 2
        a, b = make_agent(client, "a"), make_agent(client, "b")
        client.agents.archives.attach(archive.id, agent_id=a.id)
        client.agents.archives.attach(archive.id, agent_id=b.id)
        # letta-client 1.12.1 has no method for this route.
        assert {x["id"] for x in http.get(f"/v1/archives/{archive.id}/agents").json()} == {a.id, b.id}
        for agent in (a, b):
            hits = client.agents.passages.search(agent.id, query="wifi password")
            assert hits.results[0].id == one.id
        assert [x.id for x in client.archives.list(agent_id=a.id)] == [archive.id]
        # An insert by agent a goes to the archive it already has; agent b sees it too.
        client.agents.passages.create(a.id, text="lunch order goes to the wiki")
        assert "lunch order goes to the wiki" in [p.text for p in client.agents.passages.list(b.id)]

        results = client.passages.search(query="standup nine", archive_id=archive.id, limit=1)
        assert results[0].passage.text == "standup is at nine" and 0 < results[0].score <= 1.0
        client.agents.archives.detach(archive.id, agent_id=b.id)
        assert client.agents.passages.list(b.id) == []
        client.archives.passages.delete(many[0].id, archive_id=archive.id)
        assert len(client.agents.passages.list(a.id)) == 3

        size = http.get("/v1/embeddings/total_storage_size", headers={"storage-unit": "B"}).json()
        assert size == 3 * 1536 * 4
        assert http.get("/v1/embeddings/total_storage_size", headers={"storage-unit": "PB"}).status_code == 400

    def test_unsupported_dimension_is_400(self, client: Letta) -> None:
        config = {
            "embedding_endpoint_type": "openai",
            "embedding_model": "text-embedding-3-small",
            "embedding_dim": 100,
        }
        archive = client.archives.create(name="odd", embedding_config=config)  # type: ignore[arg-type]
        with pytest.raises(BadRequestError, match="dimension 100"):
            client.archives.passages.create(archive.id, text="anything")


def test_ollama_embedding_config(client: Letta, mock_llm: MockLLM) -> None:
    agent = client.agents.create(
        name="local",
        model=MODEL,
        embedding_config={  # type: ignore[arg-type]
            "embedding_endpoint_type": "ollama",
            "embedding_endpoint": mock_llm.base_url.removesuffix("/v1"),
            "embedding_model": "nomic-embed-text",
            "embedding_dim": 768,
        },
    )
    mock_llm.reset()
    client.agents.passages.create(agent.id, text="ollama keeps the vectors local")
    client.agents.passages.create(agent.id, text="bread needs flour and water")
    found = client.agents.passages.search(agent.id, query="local vectors", top_k=1)
    assert found.results[0].content == "ollama keeps the vectors local"
    assert {r["_api"] for r in mock_llm.embedding_requests} == {"ollama"}
    assert {r["model"] for r in mock_llm.embedding_requests} == {"nomic-embed-text"}
