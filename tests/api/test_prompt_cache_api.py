"""OpenAI's extended prompt-cache retention, as Letta 0.16.8's OpenAI client asks for it: `prompt_cache_retention:
"24h"` on requests to OpenAI itself for gpt-4.1 and the gpt-5 family (not gpt-5-mini), nothing for other models or
for OpenRouter, and never a `prompt_cache_key`. Checked in what the model is sent (the mock's records) and in the
raw payload preview."""

from typing import Any

import httpx
import pytest

from tests.mock_llm import MockLLM, Reply

HI = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def raw_agent(http: httpx.Client, mock_llm: MockLLM, model: str, **config: Any) -> str:
    llm_config = {
        "model": model,
        "model_endpoint_type": "openai",
        "model_endpoint": mock_llm.base_url,
        "provider_name": "openai",
        "context_window": 32000,
        **config,
    }
    created = http.post("/v1/agents/", json={"name": "cache-" + model.replace(".", "-"), "llm_config": llm_config})
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


def sent_for(http: httpx.Client, mock_llm: MockLLM, agent_id: str) -> dict[str, Any]:
    mock_llm.script(Reply.text("ok"))
    response = http.post(f"/v1/agents/{agent_id}/messages", json=HI)
    assert response.status_code == 200, response.text
    return mock_llm.requests[-1]


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-5", "gpt-5.1-codex", "gpt-5.2"])
def test_models_with_extended_retention_ask_for_24h(http: httpx.Client, mock_llm: MockLLM, model: str) -> None:
    sent = sent_for(http, mock_llm, raw_agent(http, mock_llm, model))
    assert sent["prompt_cache_retention"] == "24h"
    assert "prompt_cache_key" not in sent


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-5-mini", "o3-mini"])
def test_other_models_ask_for_no_retention(http: httpx.Client, mock_llm: MockLLM, model: str) -> None:
    sent = sent_for(http, mock_llm, raw_agent(http, mock_llm, model))
    assert "prompt_cache_retention" not in sent and "prompt_cache_key" not in sent


def test_openrouter_and_other_providers_get_no_cache_fields(http: httpx.Client, mock_llm: MockLLM) -> None:
    routed = raw_agent(http, mock_llm, "gpt-5.1", model_endpoint="https://openrouter.ai/api/v1", provider_name=None)
    preview = http.post(f"/v1/agents/{routed}/messages/preview-raw-payload", json=HI)
    assert preview.status_code == 200, preview.text
    assert "prompt_cache_retention" not in preview.json() and "prompt_cache_key" not in preview.json()
    proxied = raw_agent(http, mock_llm, "gpt-4.1", provider_name="my-gateway")
    assert "prompt_cache_retention" not in sent_for(http, mock_llm, proxied)
    # OpenAI itself: the preview shows the field the request carries.
    direct = raw_agent(http, mock_llm, "gpt-4.1")
    shown = http.post(f"/v1/agents/{direct}/messages/preview-raw-payload", json=HI).json()
    assert shown["prompt_cache_retention"] == "24h"


def test_generate_asks_for_the_same_retention(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = raw_agent(http, mock_llm, "gpt-4.1")
    mock_llm.script(Reply.text("generated"))
    response = http.post(f"/v1/agents/{agent_id}/generate", json={"prompt": "Say something."})
    assert response.status_code == 200, response.text
    assert mock_llm.requests[-1]["prompt_cache_retention"] == "24h"


def test_summaries_ask_for_the_same_retention(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = raw_agent(http, mock_llm, "gpt-4.1")
    for _ in range(3):
        sent_for(http, mock_llm, agent_id)
    mock_llm.script(Reply.text("summary"))
    response = http.post(f"/v1/agents/{agent_id}/summarize", json={"compaction_settings": {"mode": "all"}})
    assert response.status_code == 200, response.text
    assert mock_llm.requests[-1]["prompt_cache_retention"] == "24h"
