"""The platform as a user meets it: health, OpenAPI, errors in Letta's shapes, auth, slashes, body limits."""

import json
from collections.abc import Iterator

import httpx
from letta_client import Letta
from pydantic import SecretStr

from memlet.app import create_app
from memlet.config import Settings
from tests.conftest import LiveServer


class TestHealth:
    def test_sdk_health(self, client: Letta) -> None:
        health = client.health()
        assert health.status == "ok"
        assert health.version == "0.16.8"

    def test_both_slash_forms(self, http: httpx.Client) -> None:
        for path in ("/v1/health/", "/v1/health"):
            response = http.get(path)
            assert response.status_code == 200
            assert response.json() == {"version": "0.16.8", "status": "ok"}
            assert response.headers["x-request-id"]

    def test_slash_tolerance_on_collections_and_items(self, http: httpx.Client) -> None:
        body = {"name": "s", "llm_config": {"model": "m", "model_endpoint_type": "openai", "context_window": 8000}}
        created = http.post("/v1/agents", json=body)
        assert created.status_code == 200
        assert [a["id"] for a in http.get("/v1/agents").json()] == [created.json()["id"]]
        assert http.get(f"/v1/agents/{created.json()['id']}/").status_code == 200
        missing = http.get("/v1/agents/agent-00000000-0000-4000-8000-000000000000/")
        assert missing.status_code == 404
        assert missing.json()["detail"].startswith("Agent with ID")


class TestOpenAPI:
    def test_valid_openapi_3_with_letta_operation_ids(self, http: httpx.Client) -> None:
        spec = http.get("/openapi.json").json()
        assert spec["openapi"].startswith("3.")
        assert spec["paths"]["/v1/health/"]["get"]["operationId"] == "check_health"
        from openapi_spec_validator import validate

        validate(spec)

    def test_the_schema_is_built_in_a_child_process(self, server: LiveServer, http: httpx.Client) -> None:
        """Built in the server it would keep ~20 MB (FastAPI keeps the schema, and every route's validators stay)."""
        served = http.get("/openapi.json")
        assert served.status_code == 200 and served.headers["content-type"] == "application/json"
        assert server.server.config.app.openapi_schema is None  # FastAPI's own route keeps it there
        built_here = create_app(Settings(_env_file=None, pg_uri="postgresql://memlet@127.0.0.1:1/memlet")).openapi()
        assert served.json() == built_here

    def test_docs_ui(self, http: httpx.Client) -> None:
        response = http.get("/docs")
        assert response.status_code == 200
        assert "swagger" in response.text.lower()


class TestErrors:
    def test_unknown_route_json_404(self, http: httpx.Client) -> None:
        response = http.get("/v1/no-such-thing")
        assert response.status_code == 404
        assert response.json() == {"detail": "Not Found"}

    def test_malformed_user_id_header_400(self, http: httpx.Client) -> None:
        response = http.get("/v1/agents/", headers={"user_id": "not-a-user-id"})
        assert response.status_code == 400
        assert response.json() == {
            "detail": "INVALID_ARGUMENT: Invalid user ID format: not-a-user-id. Expected format: 'user-<uuid4>'"
        }


class TestAuth:
    def test_password_protects_everything_but_health(self, settings: Settings) -> None:
        secured = settings.model_copy(update={"server_password": SecretStr("s3cret")})
        server = LiveServer(secured).start()
        try:
            with httpx.Client(base_url=server.base_url) as http:
                assert http.get("/v1/health/").status_code == 200
                denied = http.get("/v1/agents/")
                assert denied.status_code == 401
                assert denied.json() == {"detail": "Unauthorized"}
                assert http.get("/v1/agents/", headers={"Authorization": "Bearer wrong"}).status_code == 401
                ok = http.get("/v1/agents/", headers={"Authorization": "Bearer s3cret"})
                assert ok.status_code == 200
            sdk = Letta(base_url=server.base_url, api_key="s3cret", max_retries=0)
            assert isinstance(sdk.agents.list().items, list)
        finally:
            server.stop()


class TestBodyLimit:
    def test_oversized_body_413(self, settings: Settings) -> None:
        small = settings.model_copy(update={"max_body_bytes": 1000})
        server = LiveServer(small).start()
        try:
            body = json.dumps({"name": "x" * 5000})
            response = httpx.post(
                f"{server.base_url}/v1/agents/", content=body, headers={"content-type": "application/json"}
            )
            assert response.status_code == 413
            assert "maximum size" in response.json()["detail"]

            def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked, counted as it arrives
                yield body[:600].encode()
                yield body[600:].encode()

            chunked = httpx.post(
                f"{server.base_url}/v1/agents/", content=chunks(), headers={"content-type": "application/json"}
            )
            assert chunked.request.headers.get("transfer-encoding") == "chunked"
            assert chunked.status_code == 413, chunked.text
            assert "maximum size" in chunked.json()["detail"]
        finally:
            server.stop()
