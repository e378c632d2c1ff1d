"""`/latest/...`: every v1 route answers there too, as Letta mounts its v1 routers under ``/latest`` (left out of the
schema), behind the same password, with Letta's list of open probe paths. (letta-client's paths start with ``/v1``,
so it cannot be pointed at ``/latest``: curl-style callers use it.)"""

import httpx
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from tests.api.test_metrics_api import scrape, value
from tests.conftest import LiveServer

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


class TestLatestAlias:
    def test_crud_through_latest(self, client: Letta, http: httpx.Client) -> None:
        created = http.post("/latest/agents/", json={"name": "via-latest", "model": MODEL, "embedding": EMBEDDING})
        assert created.status_code == 200, created.text
        agent_id = created.json()["id"]
        assert [a["id"] for a in http.get("/latest/agents/").json()] == [agent_id]
        assert http.get(f"/latest/agents/{agent_id}").json()["name"] == "via-latest"
        patched = http.patch(f"/latest/agents/{agent_id}", json={"description": "d"})
        assert patched.json()["description"] == "d"
        block = http.post("/latest/blocks/", json={"label": "notes", "value": "hi"}).json()
        # The /v1 paths are unchanged and see the same data.
        assert client.blocks.retrieve(block["id"]).value == "hi"
        assert client.agents.retrieve(agent_id).description == "d"
        assert http.delete(f"/latest/agents/{agent_id}").status_code == 200
        assert client.agents.list().items == []

    def test_raw_paths_slashes_and_misses(self, http: httpx.Client) -> None:
        assert http.get("/latest/health/").json()["status"] == "ok"
        assert http.get("/latest/health").status_code == 200
        assert http.get("/latest/agents").status_code == 200
        missing = http.get("/latest/agents/agent-00000000-0000-4000-8000-000000000000")
        assert missing.status_code == 404
        assert "not found" in missing.json()["detail"].lower()
        assert http.get("/latest/no-such-thing").json() == {"detail": "Not Found"}
        assert http.get("/latest").status_code == 404  # no route of its own
        assert http.get("/latestagents/").status_code == 404

    def test_not_in_the_schema(self, http: httpx.Client) -> None:
        paths = http.get("/openapi.json").json()["paths"]
        assert "/v1/agents/" in paths
        assert not [p for p in paths if p.startswith("/latest")]

    def test_counted_under_the_v1_route(self, http: httpx.Client) -> None:
        before = scrape(http)
        assert http.get("/latest/tools/").status_code == 200
        after = scrape(http)
        labels = {"method": "GET", "route": "/v1/tools/", "status": "200"}
        assert (
            value(after, "memlet_http_requests_total", **labels) - value(before, "memlet_http_requests_total", **labels)
            == 1
        )


class TestLatestPassword:
    def test_same_password_and_letta_open_paths(self, settings: Settings) -> None:
        secured = LiveServer(settings.model_copy(update={"server_password": SecretStr("s3cret")})).start()
        try:
            with httpx.Client(base_url=secured.base_url) as http:
                assert http.get("/latest/agents/").status_code == 401
                assert http.get("/latest/agents/", headers={"Authorization": "Bearer wrong"}).status_code == 401
                assert http.get("/latest/agents/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
                assert http.get("/latest/agents/", headers={"X-BARE-PASSWORD": "password s3cret"}).status_code == 200
                for probe in ("/latest/health/", "/latest/ready", "/latest/ready/"):
                    assert http.get(probe).status_code == 200, probe
                # Letta's open list has `/latest/health/` only with its slash.
                assert http.get("/latest/health").status_code == 401
        finally:
            secured.stop()
