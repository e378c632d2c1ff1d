"""Providers the environment configures under Letta's variable names (GROQ_API_KEY, VLLM_API_BASE, ZAI_API_KEY, ...),
and BYOK providers that keep serving the models they last listed while they cannot be reached."""

from typing import Any

import httpx
import pytest
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from memlet.crypto import settings_secrets
from memlet.providers.endpoints import key_for
from memlet.providers.env_providers import env_keys, env_sources
from tests.api.listener import http_client, start_server
from tests.mock_llm import MockLLM, Reply


def models(http: httpx.Client, **params: Any) -> dict[str, dict[str, Any]]:
    response = http.get("/v1/models/", params=params)
    assert response.status_code == 200, response.text
    return {m["handle"]: m for m in response.json()}


def test_local_and_keyed_servers_from_the_environment_serve_agents(
    settings: Settings, pg_uri: str, mock_llm: MockLLM
) -> None:
    """VLLM_API_BASE without /v1 (Letta adds it) and ZAI_API_KEY with ZAI_BASE_URL, both at the mock."""
    root = mock_llm.base_url.removesuffix("/v1")
    env = {"vllm_api_base": root, "zai_api_key": SecretStr("sk-zai-secret"), "zai_base_url": mock_llm.base_url}
    with start_server(settings, pg_uri, **env) as server, http_client(server) as http:
        listed = models(http, provider_category=["base"])
        vllm = listed["vllm/gpt-4o-mini"]
        assert (vllm["provider_name"], vllm["provider_category"], vllm["max_tokens"]) == ("vllm", "base", 4096)
        assert vllm["model_endpoint"] == mock_llm.base_url
        zai = listed["zai/gpt-4o-mini"]
        assert (zai["provider_name"], zai["model_endpoint_type"], zai["max_tokens"]) == ("zai", "zai", 16384)
        assert [m["handle"] for m in models(http, provider_name="vllm").values()] == sorted(
            h for h in listed if h.startswith("vllm/")
        )

        client = Letta(base_url=server.base_url)
        for handle in ("zai/gpt-4o-mini", "vllm/gpt-4o-mini"):
            agent = client.agents.create(model=handle)
            assert agent.llm_config.handle == handle and agent.llm_config.provider_name == handle.split("/")[0]
            mock_llm.reset()
            mock_llm.script(Reply.text(f"hello from {handle}"))
            reply = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
            assert reply.messages[-1].content == f"hello from {handle}"  # type: ignore[union-attr]
            if handle.startswith("zai/"):  # the Z.ai key goes to the Z.ai URL, for Z.ai agents
                assert mock_llm.authorizations[-1] == "Bearer sk-zai-secret"


def test_each_key_is_bound_to_its_own_providers_url(settings: Settings) -> None:
    keys = {
        "groq_api_key": "gsk-1",
        "together_api_key": "tg-2",
        "xai_api_key": "xai-3",
        "openrouter_api_key": "or-4",
        "openrouter_handle_base": "router",
        "deepseek_api_key": "ds-5",
        "baseten_api_key": "bt-6",
    }
    configured = settings.model_copy(update={k: v if k.endswith("base") else SecretStr(v) for k, v in keys.items()})
    sources = {s.name: s for s in env_sources(configured)}
    assert {name: (s.provider_type, s.base_url) for name, s in sources.items() if name not in ("letta", "openai")} == {
        "groq": ("groq", "https://api.groq.com/openai/v1"),
        "together": ("together", "https://api.together.xyz/v1"),
        "xai": ("xai", "https://api.x.ai/v1"),
        "router": ("openrouter", "https://openrouter.ai/api/v1"),
        "deepseek": ("deepseek", "https://api.deepseek.com/v1"),
        "baseten": ("baseten", "https://inference.baseten.co/v1"),
    }
    bound = env_keys(configured)
    assert key_for("https://api.groq.com/openai/v1", bound, "groq") == "gsk-1"
    assert key_for("https://openrouter.ai/api/v1/", bound, "openrouter") == "or-4"
    assert key_for("https://api.together.xyz/v1", bound, "openai") == "tg-2"  # the URL decides, not the type
    assert key_for("https://elsewhere.example/v1", bound, "groq") is None
    assert {"gsk-1", "tg-2", "xai-3", "or-4", "ds-5", "bt-6"} <= set(settings_secrets(configured))  # masked in logs


@pytest.mark.usefixtures("mock_llm")
def test_a_byok_provider_that_cannot_be_reached_keeps_its_models(settings: Settings, pg_uri: str) -> None:
    """Letta stores a provider's models when it is created or refreshed and reads them from there."""
    own = MockLLM.start()
    try:
        with start_server(settings, pg_uri, allowed_hosts="127.0.0.1") as server, http_client(server) as http:
            body = {"name": "mine", "provider_type": "openai", "api_key": "sk-mine", "base_url": own.base_url}
            provider = http.post("/v1/providers/", json=body).json()
            assert "mine/gpt-4o-mini" in models(http, provider_category=["byok"])
            own.stop()
            # An edit drops the cached list, so the next listing asks the provider, which is down.
            assert http.patch(f"/v1/providers/{provider['id']}", json={"api_key": "sk-mine-2"}).status_code == 200
            assert "mine/gpt-4o-mini" in models(http, provider_category=["byok"])
            created = http.post("/v1/agents/", json={"name": "kept", "model": "mine/gpt-4o-mini"})
            assert created.status_code == 200, created.text
            assert created.json()["llm_config"]["model_endpoint"] == own.base_url
    finally:
        own.stop()
