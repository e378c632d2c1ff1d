"""Providers as Letta 0.16.8's provider tests pin them (tests/test_byok_api_key_routing.py,
tests/test_provider_api.py, tests/managers/test_provider_manager.py): which key a BYOK model's requests carry.

The mock LLM stands in for api.openai.com (OPENAI_API_KEY `sk-mock`) and, on the Claude server, for
api.anthropic.com; a BYOK provider created at the same URL has a key of its own.
"""

from typing import Any

import httpx
from letta_client import Letta

from memlet.config import Settings
from tests.api.conftest import ANTHROPIC_KEY
from tests.api.listener import http_client, listener, start_server
from tests.mock_llm import MockLLM, Reply

ENV_OPENAI_KEY = "Bearer sk-mock"


def add_provider(http: httpx.Client, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/providers/", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def turn_and_insert(client: Letta, mock_llm: MockLLM, agent_id: str) -> None:
    mock_llm.reset()
    mock_llm.script(Reply.text("hello"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    client.agents.passages.create(agent_id, text="a note to embed")


class TestByokKeys:
    def test_a_byok_models_requests_carry_its_key_even_at_the_environments_url(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        add_provider(http, name="mine", provider_type="openai", api_key="sk-byok-1", base_url=mock_llm.base_url)
        byok = client.agents.create(model="mine/gpt-4o-mini", embedding="mine/text-embedding-3-small")
        turn_and_insert(client, mock_llm, byok.id)
        assert mock_llm.authorizations == ["Bearer sk-byok-1"]
        # Letta embedded with the server's OPENAI_API_KEY whatever the provider (a BYOK owner's archival memory
        # was paid for by the server); memlet sends the provider's own key.
        assert mock_llm.embedding_authorizations == ["Bearer sk-byok-1"]

        base = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
        turn_and_insert(client, mock_llm, base.id)
        assert mock_llm.authorizations == mock_llm.embedding_authorizations == [ENV_OPENAI_KEY]

    def test_an_anthropic_byok_models_requests_carry_its_key(self, claude: Letta, mock_llm: MockLLM) -> None:
        with httpx.Client(base_url=str(claude.base_url), timeout=60) as http:
            add_provider(
                http, name="my-claude", provider_type="anthropic", api_key="sk-ant-byok", base_url=mock_llm.base_url
            )
        handles = [m.handle for m in claude.models.list(provider_name="my-claude")]
        assert "my-claude/claude-haiku-4-5-20251001" in handles  # a BYOK provider gets no short handles
        for handle, key in (
            ("my-claude/claude-haiku-4-5-20251001", "sk-ant-byok"),
            ("anthropic/claude-haiku-4-5", ANTHROPIC_KEY),
        ):
            agent = claude.agents.create(model=handle, embedding="openai/text-embedding-3-small")
            mock_llm.reset()
            mock_llm.script(Reply.text("hello"))
            claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
            assert mock_llm.authorizations == [key]


class TestByokHandles:
    def test_each_openai_type_provider_lists_its_models_under_its_own_name(
        self, settings: Settings, pg_uri: str, mock_llm: MockLLM
    ) -> None:
        """Letta listed an OpenAI-type provider off api.openai.com as `openai-proxy/<model>`, so two such BYOK
        providers shared handles; memlet names each provider's models after it."""
        with listener() as far:
            far.models = ["gpt-4o-mini", "far-only"]
            allowed = f"127.0.0.1:{far.port}"
            with start_server(settings, pg_uri, allowed_hosts=allowed) as server, http_client(server) as http:
                near = add_provider(
                    http, name="near", provider_type="openai", api_key="sk-n", base_url=mock_llm.base_url
                )
                # A URL naming only the host gets /v1 (Letta kept it as given and called host/chat/completions).
                distant = add_provider(http, name="far", provider_type="openai", api_key="sk-f", base_url=f"{far.url}/")
                assert (near["base_url"], distant["base_url"]) == (mock_llm.base_url, f"{far.url}/v1")
                listed = {m["handle"]: m for m in http.get("/v1/models/", params={"provider_category": "byok"}).json()}
                assert {"near/gpt-4o-mini", "far/gpt-4o-mini", "far/far-only"} <= set(listed)
                assert not [h for h in listed if h.startswith("openai-proxy/")]
                assert listed["far/gpt-4o-mini"]["model_endpoint"] == f"{far.url}/v1"
                assert listed["near/gpt-4o-mini"]["provider_name"] == "near"
                created = http.post(
                    "/v1/agents/", json={"model": "far/gpt-4o-mini", "embedding": "near/text-embedding-3-small"}
                )
                assert created.status_code == 200, created.text
                agent_id = created.json()["id"]
                http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
                chats = [s for s in far.seen if s.path.endswith("/chat/completions")]
                assert [s.path for s in chats] == ["/v1/chat/completions"]
                assert {s.headers.get("authorization") for s in chats} == {"Bearer sk-f"}


class TestChecks:
    def test_a_refused_key_is_a_401_and_an_unknown_provider_a_404(self, settings: Settings, pg_uri: str) -> None:
        """tests/test_provider_api.py: checking a provider whose key the provider refuses answers 401."""
        with listener() as refusing:
            allowed = f"127.0.0.1:{refusing.port}"
            with start_server(settings, pg_uri, allowed_hosts=allowed) as server, http_client(server) as http:
                refusing.status, refusing.body = 401, b'{"error": {"message": "Incorrect API key provided"}}'
                # Created even though its models cannot be listed with that key (as in Letta).
                provider = add_provider(
                    http, name="bad-key", provider_type="openai", api_key="test-api-key-123", base_url=refusing.url
                )
                assert provider["last_synced"] is None
                checked = http.post(f"/v1/providers/{provider['id']}/check")
                assert checked.status_code == 401
                assert checked.json()["error"]["type"] == "llm_authentication"
                assert checked.json()["error"]["message"] == "Authentication failed with the LLM model provider."
                body = {"provider_type": "openai", "api_key": "test-api-key-123", "base_url": refusing.url}
                assert http.post("/v1/providers/check", json=body).status_code == 401
                assert [s.headers.get("authorization") for s in refusing.seen][-1] == "Bearer test-api-key-123"
                unknown = http.post("/v1/providers/provider-00000000-0000-4000-8000-000000000000/check")
                assert unknown.status_code == 404


class TestUnsupportedTypes:
    def test_a_provider_memlet_cannot_call_is_stored_without_models(self, http: httpx.Client) -> None:
        """README: memlet has no client for Google, Azure, Bedrock, MiniMax or ChatGPT OAuth."""
        provider = add_provider(http, name="my-gemini", provider_type="google_ai", api_key="AIza-test")
        assert (provider["provider_type"], provider["last_synced"], provider["base_url"]) == ("google_ai", None, None)
        assert http.get("/v1/models/", params={"provider_name": "my-gemini"}).json() == []
        checked = http.post(f"/v1/providers/{provider['id']}/check")
        assert checked.status_code == 400
        assert checked.json()["detail"] == "Checking a google_ai provider's key is not supported"
        agent = http.post(
            "/v1/agents/", json={"model": "my-gemini/gemini-2.5-flash", "embedding": "openai/text-embedding-3-small"}
        )
        assert agent.status_code == 404
