"""What Letta 0.16.8's manager tests (tests/managers/test_agent_manager.py, test_agent_tag_manager.py,
test_identity_manager.py) pin down that a user sees through the API."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_agents_api import EMBEDDING, MODEL, make_agent
from tests.api.test_anthropic_api import SONNET, chttp  # noqa: F401 (fixtures)

FILE_TOOLS = {"open_files", "grep_files", "semantic_search_files"}


def _names(http: httpx.Client, **params: object) -> list[str]:
    response = http.get("/v1/agents/", params=params)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return [a["name"] for a in response.json()]


class TestDefaultSource:
    """`include_default_source` (deprecated): a new folder named after the agent, with the agent's embedding."""

    def test_creates_and_attaches_a_folder_named_after_the_agent(self, client: Letta) -> None:
        agent = make_agent(client, "test_default_source_agent", include_default_source=True, include_base_tools=False)
        assert [(s.name, s.embedding_config.embedding_endpoint_type) for s in agent.sources] == [
            ("test_default_source_agent External Data Source", "openai")
        ]
        assert [f.name for f in client.agents.folders.list(agent.id)] == [agent.sources[0].name]
        # As in Letta, a default folder alone brings no file tools.
        assert not FILE_TOOLS & {t.name for t in agent.tools}
        plain = make_agent(client, "no_default_source", include_default_source=False, include_base_tools=False)
        assert plain.sources == []

    def test_joins_the_requested_folders(self, client: Letta) -> None:
        folder = client.folders.create(name="mine", embedding=EMBEDDING)
        agent = make_agent(client, "both", include_default_source=True, folder_ids=[folder.id])
        assert sorted(s.name for s in agent.sources) == ["both External Data Source", "mine"]
        assert {t.name for t in agent.tools} >= FILE_TOOLS

    def test_a_taken_folder_name_is_a_409_and_creates_no_agent(self, client: Letta, http: httpx.Client) -> None:
        client.folders.create(name="twin External Data Source", embedding=EMBEDDING)
        body = {"name": "twin", "model": "openai/gpt-4o-mini", "embedding": EMBEDDING, "include_default_source": True}
        response = http.post("/v1/agents/", json=body)
        assert response.status_code == 409, response.text
        assert _names(http) == []

    def test_without_an_embedding_is_a_400_and_creates_nothing(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", json={"name": "bare", "model": MODEL, "include_default_source": True})
        assert response.status_code == 400, response.text
        assert "include_default_source needs an embedding" in response.json()["detail"]
        assert _names(http) == [] and http.get("/v1/folders/").json() == []


class TestListings:
    def test_tag_matching_and_counts(self, client: Letta, http: httpx.Client) -> None:
        make_agent(client, "agent1", memory_blocks=[], tags=["primary_agent", "benefit_1", "test"])
        make_agent(client, "agent2", memory_blocks=[], tags=["primary_agent", "benefit_2"])
        make_agent(client, "agent3", memory_blocks=[], tags=["primary_agent", "benefit_1", "benefit_2", "test"])
        assert set(_names(http, tags=["primary_agent", "benefit_1"], match_all_tags=True)) == {"agent1", "agent3"}
        assert set(_names(http, tags=["benefit_1", "benefit_2"])) == {"agent1", "agent2", "agent3"}
        assert _names(http, tags=["nonexistent1", "nonexistent2"], match_all_tags=True) == []
        assert _names(http, tags=["nonexistent1", "nonexistent2"]) == []
        assert _names(http, tags=["primary_agent"], match_all_tags=True, name="agent2") == ["agent2"]
        count = lambda **params: http.get("/v1/agents/count", params=params).json()  # noqa: E731
        assert count(tags=["test"]) == 2
        assert count(tags=["benefit_2", "test"], match_all_tags=True) == 1
        assert count(name="agent2") == 1

    def test_query_text_with_both_cursors(self, client: Letta, http: httpx.Client) -> None:
        for name in ("Search Agent One", "Search Agent Two", "Different Agent"):
            make_agent(client, name, memory_blocks=[])
        assert set(_names(http, query_text="search agent")) == {"Search Agent One", "Search Agent Two"}
        assert _names(http, query_text="different agent") == ["Different Agent"]
        every = [a["id"] for a in http.get("/v1/agents/", params={"query_text": "agent"}).json()]
        assert len(every) == 3
        middle = http.get("/v1/agents/", params={"query_text": "search agent", "before": every[2], "after": every[0]})
        assert [a["id"] for a in middle.json()] == [every[1]]

    def test_cursors_in_both_orders(self, client: Letta, http: httpx.Client) -> None:
        ids = {n: make_agent(client, n, memory_blocks=[]).id for n in ("alpha_agent", "beta_agent", "gamma_agent")}
        assert _names(http, order="asc", after=ids["alpha_agent"]) == ["beta_agent", "gamma_agent"]
        assert _names(http, order="asc", before=ids["gamma_agent"]) == ["alpha_agent", "beta_agent"]
        assert _names(http, order="desc", after=ids["gamma_agent"]) == ["beta_agent", "alpha_agent"]
        assert _names(http, order="desc", before=ids["alpha_agent"]) == ["gamma_agent", "beta_agent"]

    def test_list_tags(self, client: Letta) -> None:
        tags = ["alpha", "beta", "gamma", "delta", "epsilon"]
        for i in range(3):
            make_agent(client, f"tag_agent_{i}", memory_blocks=[], tags=tags[i : i + 3])
        assert client.tags.list() == sorted(tags)
        assert client.tags.list(limit=2) == ["alpha", "beta"]
        assert client.tags.list(after="beta") == ["delta", "epsilon", "gamma"]
        assert client.tags.list(query_text="ta") == ["beta", "delta"]
        assert client.tags.list(query_text="xyz") == []


class TestSubagentTag:
    def test_hidden_forced_on_create_only(self, client: Letta) -> None:
        assert make_agent(client, "s", memory_blocks=[], tags=["role:subagent", "test"], hidden=False).hidden is True
        agent = make_agent(client, "t", memory_blocks=[])
        assert agent.hidden is None
        assert client.agents.update(agent.id, tags=["role:subagent", "test"]).hidden is None


@pytest.mark.usefixtures("claude")  # empties the database after each test
class TestCompactionModelOnModelChange:
    """A PATCH moving the agent to another provider takes a default-derived summarizer model along."""

    @staticmethod
    def _agent(http: httpx.Client, **compaction: object) -> str:
        body = {"name": "c", "model": MODEL, "embedding": EMBEDDING, "compaction_settings": compaction or None}
        created = http.post("/v1/agents/", json=body)
        assert created.status_code == 200, created.text
        return str(created.json()["id"])

    @staticmethod
    def _patch(http: httpx.Client, agent_id: str, **body: object) -> dict[str, Any]:
        response = http.patch(f"/v1/agents/{agent_id}", json=body)
        assert response.status_code == 200, response.text
        return dict(response.json()["compaction_settings"])

    def test_a_default_model_follows_the_provider(self, chttp: httpx.Client) -> None:  # noqa: F811
        settings = {"model_settings": {"provider_type": "openai", "max_output_tokens": 1234}, "clip_chars": 900}
        agent_id = self._agent(chttp, **settings)
        moved = self._patch(chttp, agent_id, model=SONNET)
        assert moved["model"] == SONNET and moved["model_settings"] is None and moved["clip_chars"] == 900
        assert chttp.get(f"/v1/agents/{agent_id}").json()["compaction_settings"] == moved

    def test_with_a_partial_compaction_patch(self, chttp: httpx.Client) -> None:  # noqa: F811
        agent_id = self._agent(chttp)
        prompt_for_all = self._patch(chttp, self._agent(chttp), compaction_settings={"mode": "all"})["prompt"]
        moved = self._patch(chttp, agent_id, model=SONNET, compaction_settings={"mode": "all"})
        assert (moved["model"], moved["mode"], moved["prompt"]) == (SONNET, "all", prompt_for_all)

    def test_a_custom_or_named_model_stays(self, chttp: httpx.Client) -> None:  # noqa: F811
        custom = self._agent(chttp, model="openai/gpt-4o")
        assert self._patch(chttp, custom, model=SONNET)["model"] == "openai/gpt-4o"
        named = self._agent(chttp)
        assert self._patch(chttp, named, model=SONNET, compaction_settings={"model": MODEL})["model"] == MODEL

    def test_a_move_within_the_provider_keeps_it(self, chttp: httpx.Client) -> None:  # noqa: F811
        agent_id = self._agent(chttp)
        assert self._patch(chttp, agent_id, model="openai/gpt-4o")["model"] == MODEL
