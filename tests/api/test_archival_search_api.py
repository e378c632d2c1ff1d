"""Archival search as Letta 0.16.8 answers it where memlet once differed: no embedding, no query, time zones."""

import httpx
from letta_client import Letta

from tests.api.test_archival_api import EMBEDDING, MODEL

TEXTS = ["Apple pie recipe", "Banana bread", "Cider from APPLES"]


class TestWithoutEmbedding:
    def test_a_substring_in_any_case_oldest_first(self, client: Letta, http: httpx.Client) -> None:
        agent = client.agents.create(name="plain", model=MODEL)
        assert agent.embedding_config is None
        for text in TEXTS:
            client.agents.passages.create(agent.id, text=text)
        found = client.agents.passages.search(agent.id, query="PPLE")
        assert [r.content for r in found.results] == ["Apple pie recipe", "Cider from APPLES"]
        body = {"agent_id": agent.id, "query": "pple"}
        searched = http.post("/v1/passages/search", json=body).json()
        assert [r["passage"]["text"] for r in searched] == ["Apple pie recipe", "Cider from APPLES"]


class TestSearchPassagesWithoutQuery:
    def test_the_oldest_come_first(self, client: Letta, http: httpx.Client) -> None:
        agent = client.agents.create(name="lister", model=MODEL, embedding=EMBEDDING)
        for text in TEXTS:
            client.agents.passages.create(agent.id, text=text)
        found = http.post("/v1/passages/search", json={"agent_id": agent.id, "limit": 2}).json()
        assert [r["passage"]["text"] for r in found] == TEXTS[:2]
