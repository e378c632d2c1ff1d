"""`/v1/providers` BYOK CRUD, key checks and the models a BYOK provider adds (letta-client 1.12.1 has no
providers resource, so these go through plain HTTP as the ADE does)."""

from datetime import datetime
from typing import Any

import httpx
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import http_client, start_server
from tests.mock_llm import Reply


def create(http: httpx.Client, mock_url: str, name: str = "my-proxy", **extra: Any) -> dict[str, Any]:
    body = {"name": name, "provider_type": "openai", "api_key": "sk-byok-secret", "base_url": mock_url, **extra}
    response = http.post("/v1/providers/", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


class TestProviderCrud:
    def test_round_trip_never_returns_the_key(self, http: httpx.Client, mock_llm: Any) -> None:
        provider = create(http, mock_llm.base_url)
        assert provider["id"].startswith("provider-")
        assert (provider["provider_category"], provider["provider_type"]) == ("byok", "openai")
        assert provider["api_key"] is None and provider["api_key_enc"] is None
        assert provider["last_synced"] is None  # Letta's create answers before the models are listed
        assert http.get(f"/v1/providers/{provider['id']}").json()["last_synced"] is not None  # ... which they were
        assert "sk-byok-secret" not in http.get(f"/v1/providers/{provider['id']}").text
        assert [p["id"] for p in http.get("/v1/providers/").json()] == [provider["id"]]

        changed = http.patch(f"/v1/providers/{provider['id']}", json={"api_key": "sk-new", "region": "eu"})
        assert changed.status_code == 200
        assert (changed.json()["region"], changed.json()["api_key"]) == ("eu", None)

        deleted = http.delete(f"/v1/providers/{provider['id']}")
        assert deleted.json() == {"message": f"Provider id={provider['id']} successfully deleted"}
        missing = http.get(f"/v1/providers/{provider['id']}")
        assert missing.status_code == 404
        assert http.get("/v1/providers/").json() == []

    def test_list_filters_and_order(self, http: httpx.Client, mock_llm: Any) -> None:
        first = create(http, mock_llm.base_url, "first")
        second = create(http, mock_llm.base_url, "second")
        assert [p["name"] for p in http.get("/v1/providers/").json()] == ["second", "first"]
        assert [p["name"] for p in http.get("/v1/providers/", params={"order": "asc"}).json()] == ["first", "second"]
        assert [p["id"] for p in http.get("/v1/providers/", params={"name": "first"}).json()] == [first["id"]]
        page = http.get("/v1/providers/", params={"after": second["id"]}).json()
        assert [p["id"] for p in page] == [first["id"]]

    def test_base_provider_name_is_taken(self, http: httpx.Client) -> None:
        response = http.post("/v1/providers/", json={"name": "openai", "provider_type": "openai", "api_key": "k"})
        assert response.status_code == 400
        assert "conflicts with an existing base provider" in response.json()["detail"]

    def test_bad_id_is_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/providers/provider-nope").status_code == 422


class TestByokModels:
    def test_models_listed_and_resolvable(self, http: httpx.Client, client: Letta, mock_llm: Any) -> None:
        create(http, mock_llm.base_url, "byok-openai")
        byok = client.models.list(provider_category=["byok"])
        assert "byok-openai/gpt-4o-mini" in [m.handle for m in byok]
        assert {m.provider_category for m in byok} == {"byok"}
        embeddings = [m.handle for m in client.models.embeddings.list()]
        assert "byok-openai/text-embedding-3-small" in embeddings

        agent = client.agents.create(name="byok", model="byok-openai/gpt-4o-mini")
        assert agent.llm_config.provider_name == "byok-openai"
        assert agent.llm_config.provider_category == "byok"
        assert agent.llm_config.model_endpoint == mock_llm.base_url
        # Its steps say so too (Letta's step.provider_category), as a base model's say "base".
        mock_llm.script(Reply.text("from my own key"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        assert [s.provider_category for s in client.steps.list(agent_id=agent.id).items] == ["byok"]
        base = client.agents.create(name="base", model="openai/gpt-4o-mini")
        mock_llm.script(Reply.text("from the server's key"))
        client.agents.messages.create(base.id, messages=[{"role": "user", "content": "hi"}])
        assert [s.provider_category for s in client.steps.list(agent_id=base.id).items] == ["base"]

    def test_deleted_provider_models_disappear(self, http: httpx.Client, client: Letta, mock_llm: Any) -> None:
        provider = create(http, mock_llm.base_url, "short-lived")
        http.delete(f"/v1/providers/{provider['id']}")
        assert not [m for m in client.models.list() if (m.handle or "").startswith("short-lived/")]


class TestChecks:
    def test_check_reachable_provider(self, http: httpx.Client, mock_llm: Any) -> None:
        body = {"provider_type": "openai", "api_key": "sk-any", "base_url": mock_llm.base_url}
        response = http.post("/v1/providers/check", json=body)
        assert response.status_code == 200
        assert response.json() == {"message": "Valid api key for provider_type=openai"}

    def test_check_existing_and_refresh(self, http: httpx.Client, mock_llm: Any) -> None:
        provider = create(http, mock_llm.base_url)
        first_sync = http.get(f"/v1/providers/{provider['id']}").json()["last_synced"]
        assert http.post(f"/v1/providers/{provider['id']}/check").status_code == 200
        refreshed = http.patch(f"/v1/providers/{provider['id']}/refresh")
        assert refreshed.status_code == 200
        synced = datetime.fromisoformat(refreshed.json()["last_synced"])
        assert synced > datetime.fromisoformat(first_sync)  # listed the models again, just now
        assert http.get(f"/v1/providers/{provider['id']}").json()["last_synced"] == refreshed.json()["last_synced"]

    def test_unreachable_provider_is_an_llm_error(self, settings: Settings, pg_uri: str) -> None:
        # Port 9 on loopback is refused by the outbound policy unless the operator allows it, as here.
        body = {"provider_type": "openai", "api_key": "sk-any", "base_url": "http://127.0.0.1:9/v1"}
        with start_server(settings, pg_uri, allowed_hosts="127.0.0.1:9") as server, http_client(server) as http:
            response = http.post("/v1/providers/check", json=body)
        assert response.status_code == 500
        assert response.json()["error"]["type"] == "llm_error"
