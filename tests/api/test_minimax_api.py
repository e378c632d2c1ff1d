"""Agents on MiniMax handles, as Letta runs them: MiniMax's fixed model list, and turns through its
Anthropic-compatible messages API with the provider's key, no anthropic-beta header and a temperature in (0, 1]."""

import json
from typing import Any

import httpx
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from memlet.providers.endpoints import key_for
from memlet.providers.env_providers import env_keys, env_sources
from tests.mock_llm import MockLLM, Reply

KEY = "mm-secret-key"
HANDLE = "mm/MiniMax-M2.7"


def byok_minimax(http: httpx.Client, mock_llm: MockLLM) -> None:
    body = {"name": "mm", "provider_type": "minimax", "api_key": KEY, "base_url": mock_llm.base_url}
    response = http.post("/v1/providers/", json=body)
    assert response.status_code == 200, response.text


def test_a_byok_minimax_provider_lists_minimax_models(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    byok_minimax(http, mock_llm)
    listed = {m.handle: m for m in client.models.list(provider_name="mm")}
    assert sorted(listed) == [f"mm/MiniMax-M2{v}" for v in ("", ".1", ".1-lightning", ".5", ".7")]
    model = listed[HANDLE]
    assert (model.model_endpoint_type, model.model_endpoint) == ("minimax", mock_llm.base_url)
    assert (model.context_window, model.max_tokens, model.provider_category) == (200_000, 128_000, "byok")


def test_a_turn_goes_to_the_messages_api_with_the_providers_key_and_no_beta(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    mock_llm.reset()
    byok_minimax(http, mock_llm)
    agent = client.agents.create(model=HANDLE)
    assert agent.llm_config.model_endpoint_type == "minimax"
    mock_llm.script(Reply.text("Hello from MiniMax."))
    reply = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert [m.content for m in reply.messages if m.message_type == "assistant_message"] == ["Hello from MiniMax."]
    [sent] = mock_llm.requests
    assert sent["_api"] == "anthropic" and sent["model"] == "MiniMax-M2.7"
    assert "_beta" not in sent  # MiniMax is sent no anthropic-beta header
    assert mock_llm.authorizations[-1] == KEY  # x-api-key: the BYOK provider's key
    assert "hi" in json.dumps(sent["messages"][-1]["content"])

    mock_llm.reset()
    mock_llm.script(Reply.text("Streamed."))
    body = {"messages": [{"role": "user", "content": "again"}], "stream_tokens": True}
    streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
    assert streamed.status_code == 200 and "Streamed." in streamed.text
    [sent] = mock_llm.requests
    assert sent["stream"] is True and "_beta" not in sent  # not even fine-grained tool streaming


def test_the_temperature_is_clamped_to_minimaxs_range(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    byok_minimax(http, mock_llm)
    sent_temperatures: list[Any] = []
    for temperature in (1.7, 0.0):
        agent = client.agents.create(model=HANDLE)
        config = {**agent.llm_config.model_dump(mode="json"), "temperature": temperature, "enable_reasoner": False}
        assert http.patch(f"/v1/agents/{agent.id}", json={"llm_config": config}).status_code == 200
        mock_llm.reset()
        mock_llm.script(Reply.text("ok"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        sent_temperatures.append(mock_llm.requests[-1].get("temperature"))
    assert sent_temperatures == [1.0, 0.01]


def test_minimax_api_key_enables_the_minimax_provider_at_its_anthropic_url(settings: Settings) -> None:
    configured = settings.model_copy(update={"minimax_api_key": SecretStr("mm-env")})
    [source] = [s for s in env_sources(configured) if s.name == "minimax"]
    assert (source.provider_type, source.base_url) == ("minimax", "https://api.minimax.io/anthropic")
    assert key_for("https://api.minimax.io/anthropic", env_keys(configured), "minimax") == "mm-env"


def test_a_key_check_counts_tokens_on_minimax_m2_7_with_the_key(http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta checks a MiniMax key with a token count (MiniMax has no model listing) and answers its 200 message."""
    mock_llm.reset()
    body = {"provider_type": "minimax", "api_key": KEY, "base_url": mock_llm.base_url}
    checked = http.post("/v1/providers/check", json=body)
    assert checked.status_code == 200, checked.text
    assert checked.json() == {"message": "Valid api key for provider_type=minimax"}
    [sent] = mock_llm.requests
    assert sent == {"model": "MiniMax-M2.7", "messages": [{"role": "user", "content": "a"}], "_api": "count_tokens"}
    assert mock_llm.authorizations == [KEY]


def test_a_refused_minimax_key_is_lettas_401(http: httpx.Client, mock_llm: MockLLM) -> None:
    """A key MiniMax refuses is Letta's llm_authentication 401, for a new key and a stored provider's alike."""
    mock_llm.reset()
    byok_minimax(http, mock_llm)
    [provider] = [p for p in http.get("/v1/providers/", params={"name": "mm"}).json() if p["name"] == "mm"]
    mock_llm.script(Reply.error(401, times=2, message="invalid api key"))
    body = {"provider_type": "minimax", "api_key": "wrong", "base_url": mock_llm.base_url}
    for checked in (http.post("/v1/providers/check", json=body), http.post(f"/v1/providers/{provider['id']}/check")):
        assert checked.status_code == 401
        assert checked.json() == {
            "error": {
                "type": "llm_authentication",
                "message": "Authentication failed with the LLM model provider.",
                "detail": "UNAUTHENTICATED: Failed to authenticate with MiniMax",
            }
        }
    assert [r["_api"] for r in mock_llm.requests] == ["count_tokens", "count_tokens"]
    assert mock_llm.authorizations == ["wrong", KEY]  # the stored provider is checked with its own key
