"""Archival search as Letta 0.16.8 answers it where memlet once differed: no embedding, no query, time zones."""

from datetime import UTC, datetime

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


class TestSearchDates:
    def test_dates_without_a_zone_are_in_the_agents(self, client: Letta, http: httpx.Client) -> None:
        agent = client.agents.create(name="nyc", model=MODEL, embedding=EMBEDDING, timezone="America/New_York")
        # 03:00 UTC on Jan 15 is 22:00 on Jan 14 in New York.
        client.agents.passages.create(agent.id, text="late note", created_at=datetime(2024, 1, 15, 3, tzinfo=UTC))
        url = f"/v1/agents/{agent.id}/archival-memory/search"

        def found(**dates: str) -> list[str]:
            response = http.get(url, params={"query": "note", **dates})
            assert response.status_code == 200, response.text
            return [r["content"] for r in response.json()["results"]]

        assert found(start_datetime="2024-01-14T21:00:00") == ["late note"]
        assert found(start_datetime="2024-01-14T23:00:00") == []
        assert found(end_datetime="2024-01-14T23:00:00") == ["late note"]
        assert found(end_datetime="2024-01-14T21:00:00") == []
        assert found(start_datetime="2024-01-14T23:00:00Z") == ["late note"]
