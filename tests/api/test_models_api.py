"""`/v1/models/` and `/v1/models/embedding` through the official letta-client, compared with Letta's samples."""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.shared_paths import SAMPLES


def sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def by_handle(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["handle"]: item for item in items}


class TestListModels:
    def test_mock_models_listed_as_openai_handles(self, client: Letta) -> None:
        handles = [m.handle for m in client.models.list()]
        assert handles[0] == "letta/letta-free"
        assert {"openai/gpt-4o-mini", "openai/gpt-4o", "openai/mock-model"} <= set(handles)
        assert not [h for h in handles if h and h.startswith("openai-proxy/")]

    def test_entry_has_sample_keys_and_types(self, http: httpx.Client) -> None:
        response = http.get("/v1/models/")
        assert response.status_code == 200
        ours = by_handle(response.json())
        theirs = by_handle(sample("list_models.json"))
        for handle in ("openai/gpt-4o-mini", "letta/letta-free"):
            assert list(ours[handle]) == list(theirs[handle])
            assert {k: type(v) for k, v in ours[handle].items()} == {k: type(v) for k, v in theirs[handle].items()}
        mini = ours["openai/gpt-4o-mini"]
        assert (mini["context_window"], mini["max_context_window"], mini["max_tokens"]) == (128000, 128000, 16384)
        assert mini["provider_category"] == "base" and mini["model_endpoint"].startswith("http://127.0.0.1:")
        assert ours["letta/letta-free"] == theirs["letta/letta-free"]

    def test_filters(self, client: Letta) -> None:
        assert [m.handle for m in client.models.list(provider_name="letta")] == ["letta/letta-free"]
        assert client.models.list(provider_category=["byok"]) == []
        base = client.models.list(provider_category=["base"], provider_type="openai")
        assert "openai/gpt-4o-mini" in [m.handle for m in base]
        assert "letta/letta-free" not in [m.handle for m in base]  # the letta provider's type is "letta"


class TestListEmbeddingModels:
    def test_matches_sample_apart_from_endpoint_port(self, client: Letta, http: httpx.Client) -> None:
        assert client.models.embeddings.list()[0].handle == "letta/letta-free"
        ours = by_handle(http.get("/v1/models/embedding").json())
        theirs = by_handle(sample("list_embedding_models.json"))
        assert list(ours) == list(theirs)
        for handle, expected in theirs.items():
            got = {**ours[handle], "embedding_endpoint": None}
            assert got == {**expected, "embedding_endpoint": None}
        assert ours["letta/letta-free"] == theirs["letta/letta-free"]


class TestHandlesAtAgentCreation:
    def test_openai_proxy_alias_is_accepted(self, client: Letta) -> None:
        agent = client.agents.create(name="proxy", model="openai-proxy/gpt-4o-mini")
        assert agent.llm_config.model == "gpt-4o-mini"
        assert agent.llm_config.context_window == 128000
        assert agent.model == "openai-proxy/gpt-4o-mini"

    def test_context_window_limit_wins(self, client: Letta) -> None:
        agent = client.agents.create(name="small", model="openai/gpt-4o-mini", context_window_limit=8000)
        assert agent.llm_config.context_window == 8000

    def test_unknown_handle_404_names_it(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", json={"name": "x", "model": "openai/gpt-nope"})
        assert response.status_code == 404
        assert response.json()["detail"].startswith("NOT_FOUND: Handle openai/gpt-nope not found")
