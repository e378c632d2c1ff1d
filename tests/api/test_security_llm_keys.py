"""Issue 7, finding 3: the server's keys go only to their own provider; BYOK keys are used for their models;
each endpoint type has its own default URL. A loopback "foreign" provider records the Authorization header."""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from memlet.config import Settings
from tests.api.listener import Listener, free_port, http_client, listener, start_server

ENV_OPENAI_KEY = "sk-mock"  # the test settings' OPENAI_API_KEY (OPENAI_BASE_URL is the mock LLM)
ENV_DEEPSEEK_KEY = "sk-deepseek-env-secret"
FOREIGN_PORT = free_port()
OLLAMA_PORT = free_port()


@pytest.fixture(scope="module")
def foreign() -> Iterator[Listener]:
    with listener(FOREIGN_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def ollama() -> Iterator[Listener]:
    with listener(OLLAMA_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def api(settings: Settings, pg_uri: str, foreign: Listener, ollama: Listener) -> Iterator[httpx.Client]:
    """A server with a DeepSeek key and an Ollama, where the operator allows the foreign provider's host:port."""
    with (
        start_server(
            settings,
            pg_uri,
            deepseek_api_key=SecretStr(ENV_DEEPSEEK_KEY),
            ollama_base_url=ollama.url,
            allowed_hosts=f"127.0.0.1:{FOREIGN_PORT}",
        ) as server,
        http_client(server) as http,
    ):
        yield http


@pytest.fixture(autouse=True)
def _clear(foreign: Listener, ollama: Listener) -> None:
    foreign.seen.clear()
    ollama.seen.clear()


def make_agent(http: httpx.Client, **body: Any) -> str:
    response = http.post("/v1/agents/", json={"name": "keys", "embedding": "openai/text-embedding-3-small", **body})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def say_hello(http: httpx.Client, agent_id: str) -> None:
    http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})


def chat_auth(server: Listener) -> list[str]:
    return [s.headers.get("authorization", "") for s in server.seen if s.path.endswith("/chat/completions")]


@pytest.mark.parametrize("endpoint_type", ["openai", "deepseek"])
def test_foreign_endpoint_gets_no_environment_key(api: httpx.Client, foreign: Listener, endpoint_type: str) -> None:
    llm = {"model": "foreign-model", "model_endpoint_type": endpoint_type, "model_endpoint": f"{foreign.url}/v1"}
    say_hello(api, make_agent(api, llm_config={**llm, "context_window": 32000}))
    sent = chat_auth(foreign)
    assert sent, "the agent's endpoint was never called"
    assert not [a for a in sent if ENV_OPENAI_KEY in a or ENV_DEEPSEEK_KEY in a]
    assert set(sent) == {"Bearer sk-no-key"}  # the SDK's placeholder: no key of ours


def test_byok_provider_key_is_sent_for_its_models(api: httpx.Client, foreign: Listener) -> None:
    provider = {"name": "far-away", "provider_type": "openai", "api_key": "sk-byok-777", "base_url": foreign.url}
    created = api.post("/v1/providers/", json=provider)
    assert created.status_code == 200, created.text
    agent_id = make_agent(api, model="far-away/foreign-model")
    say_hello(api, agent_id)
    assert chat_auth(foreign) and set(chat_auth(foreign)) == {"Bearer sk-byok-777"}


def test_byok_key_stays_with_its_provider_url(api: httpx.Client, foreign: Listener, ollama: Listener) -> None:
    provider = {"name": "keeper", "provider_type": "openai", "api_key": "sk-byok-888", "base_url": foreign.url}
    assert api.post("/v1/providers/", json=provider).status_code == 200
    # A config naming the BYOK provider but pointing at another (allowed) URL does not carry its key there.
    llm = {
        "model": "foreign-model",
        "model_endpoint_type": "openai",
        "model_endpoint": f"{ollama.url}/v1",
        "provider_name": "keeper",
        "provider_category": "byok",
        "context_window": 32000,
    }
    say_hello(api, make_agent(api, llm_config=llm))
    assert chat_auth(ollama) and not [a for a in chat_auth(ollama) if "sk-byok-888" in a]


def test_ollama_agent_without_endpoint_goes_to_ollama(api: httpx.Client, ollama: Listener) -> None:
    llm = {"model": "qwen3:8b", "model_endpoint_type": "ollama", "context_window": 32000}
    say_hello(api, make_agent(api, llm_config=llm))
    sent = chat_auth(ollama)
    assert sent, "an ollama agent without model_endpoint was not sent to OLLAMA_BASE_URL"
    assert not [a for a in sent if ENV_OPENAI_KEY in a or ENV_DEEPSEEK_KEY in a]
