"""Model handles as Letta 0.16.8 lists them (its tests create agents on `anthropic/claude-haiku-4-5`): a few
Anthropic and api.openai.com models are listed under a short handle while the config keeps the provider's id.

A live server of its own has ANTHROPIC_API_KEY set and Anthropic's base URL pointed at the mock. Google's retired
`gemini-3-pro-preview` is run as its successor, as Letta's tests/test_model_aliases.py pins."""

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import http_client, listener, start_server
from tests.mock_llm import MockLLM, Reply

EMBEDDING = "openai/text-embedding-3-small"


def test_dated_anthropic_models_are_listed_under_letta_short_handles(claude: Letta) -> None:
    listed = {m.handle: m for m in claude.models.list() if m.provider_name == "anthropic"}
    assert "anthropic/claude-haiku-4-5" in listed and "anthropic/claude-3-5-haiku" in listed
    assert "anthropic/claude-haiku-4-5-20251001" not in listed
    assert listed["anthropic/claude-haiku-4-5"].model == "claude-haiku-4-5-20251001"
    assert listed["anthropic/claude-3-5-haiku"].model == "claude-3-5-haiku-20241022"
    # A model without a short name keeps its id in the handle.
    assert listed["anthropic/claude-sonnet-4-5-20250929"].model == "claude-sonnet-4-5-20250929"


def test_agent_on_a_short_handle_calls_the_dated_model(claude: Letta, mock_llm: MockLLM) -> None:
    agent = claude.agents.create(model="anthropic/claude-haiku-4-5", embedding=EMBEDDING)
    assert agent.llm_config.handle == "anthropic/claude-haiku-4-5"
    assert agent.llm_config.model == "claude-haiku-4-5-20251001"
    assert agent.model == "anthropic/claude-haiku-4-5"
    mock_llm.script(Reply.text("hello"))
    claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert mock_llm.requests[-1]["model"] == "claude-haiku-4-5-20251001"


def test_the_dated_handle_still_resolves(claude: Letta) -> None:
    # Not listed by Letta (which answers 404 for it); memlet keeps accepting it, for agents scripted against it.
    agent = claude.agents.create(model="anthropic/claude-haiku-4-5-20251001", embedding=EMBEDDING)
    assert agent.llm_config.model == "claude-haiku-4-5-20251001"


class TestRetiredGoogleModels:
    """Letta 0.16.8 (letta/model_aliases.py) runs Google's retired `gemini-3-pro-preview` as
    `gemini-3.1-pro-preview`: in any Google llm_config, and for a handle that no provider lists."""

    def test_a_google_config_on_the_retired_model_reads_as_its_successor(self, client: Letta) -> None:
        config = {
            "model": "gemini-3-pro-preview",
            "model_endpoint_type": "google_ai",
            "handle": "google_ai/gemini-3-pro-preview",
            "context_window": 1048576,
        }
        agent = client.agents.create(llm_config=config, embedding=EMBEDDING)  # type: ignore[arg-type]
        assert (agent.llm_config.model, agent.llm_config.handle) == (
            "gemini-3.1-pro-preview",
            "google_ai/gemini-3.1-pro-preview",
        )
        # Another endpoint type keeps the name it was given.
        kept = client.agents.create(llm_config={**config, "model_endpoint_type": "openai"}, embedding=EMBEDDING)  # type: ignore[arg-type]
        assert kept.llm_config.model == "gemini-3-pro-preview"

    @pytest.mark.parametrize("endpoint", [["google_ai"], {"type": "google_ai"}])
    def test_a_malformed_endpoint_type_is_a_422_not_a_500(self, http: httpx.Client, endpoint: object) -> None:
        """Found by fuzzing: the retired-model check read a list or object `model_endpoint_type` as a set key."""
        config = {"model": "gemini-3-pro-preview", "model_endpoint_type": endpoint, "context_window": 8192}
        response = http.post("/v1/agents/", json={"llm_config": config, "embedding": EMBEDDING})
        assert response.status_code == 422, response.text

    def test_a_handle_on_the_retired_model_resolves_to_the_listed_successor(
        self, settings: Settings, pg_uri: str
    ) -> None:
        with listener() as gemini:
            gemini.models = ["gemini-3.1-pro-preview"]
            allowed = f"127.0.0.1:{gemini.port}"
            with start_server(settings, pg_uri, allowed_hosts=allowed) as server, http_client(server) as http:
                body = {"name": "gem", "provider_type": "openai", "api_key": "sk-gem", "base_url": gemini.url}
                assert http.post("/v1/providers/", json=body).status_code == 200
                created = http.post("/v1/agents/", json={"model": "gem/gemini-3-pro-preview", "embedding": EMBEDDING})
                assert created.status_code == 200, created.text
                llm = created.json()["llm_config"]
                assert (llm["model"], llm["handle"]) == ("gemini-3.1-pro-preview", "gem/gemini-3.1-pro-preview")
                assert created.json()["model"] == "gem/gemini-3.1-pro-preview"
                missing = http.post("/v1/agents/", json={"model": "gem/gemini-2-pro-preview", "embedding": EMBEDDING})
                assert missing.status_code == 404
