"""Agents without an embedding model, as Letta 0.16.8's tests/test_embedding_optional.py uses them: their archival
memory stores passages without vectors and finds them by text, beside agents that embed."""

import httpx
from letta_client import Letta

from tests.api.test_archival_api import EMBEDDING, MODEL


def test_passages_of_agents_with_and_without_an_embedding(client: Letta, http: httpx.Client) -> None:
    plain = client.agents.create(model=MODEL, memory_blocks=[{"label": "human", "value": "username: test_user"}])
    embedded = client.agents.create(model=MODEL, embedding=EMBEDDING)
    assert (plain.embedding_config, plain.embedding) == (None, None)
    assert embedded.embedding_config is not None and embedded.embedding == EMBEDDING

    special = "Special chars: @#$%^&*() 日本語 émojis 🎉 <script>alert('xss')</script>"
    for agent in (plain, embedded):
        made = client.agents.passages.create(agent.id, text="Apple is a fruit.", tags=["science", "food"])
        assert len(made) == 1 and set(made[0].tags or []) == {"science", "food"}
        assert made[0].embedding is None  # memlet sends vectors only when asked (README)
        assert [p.text for p in client.agents.passages.create(agent.id, text=special)] == [special]
        assert len(client.agents.passages.create(agent.id, text="This is a test. " * 1000)) == 1  # never chunked
        client.agents.passages.create(agent.id, text="Python is a programming language.")
        assert [p.text for p in client.agents.passages.list(agent.id, search="FRUIT")] == ["Apple is a fruit."]

    assert {p.embedding_config is None for p in client.agents.passages.list(plain.id)} == {True}
    assert {p.embedding_config is None for p in client.agents.passages.list(embedded.id)} == {False}
    asked = http.get(f"/v1/agents/{embedded.id}/archival-memory", params={"include_embedding": "true"}).json()
    assert {len(p["embedding"]) for p in asked} == {1536}  # at the model's own dimension, not padded to 4,096
    asked_plain = http.get(f"/v1/agents/{plain.id}/archival-memory", params={"include_embedding": "true"}).json()
    assert {p["embedding"] for p in asked_plain} == {None}

    found = client.agents.passages.search(plain.id, query="programming")
    assert [r.content for r in found.results] == ["Python is a programming language."]
    empty = client.agents.create(model=MODEL)
    assert client.agents.passages.search(empty.id, query="anything").results == []
    gone = client.agents.passages.list(plain.id, search="fruit")[0].id
    client.agents.passages.delete(gone, agent_id=plain.id)
    assert gone not in [p.id for p in client.agents.passages.list(plain.id)]
