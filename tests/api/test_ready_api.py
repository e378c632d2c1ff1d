"""``GET /v1/ready/``: Letta's readiness probe answers 200 while the database answers, and needs no password."""

import httpx
from pydantic import SecretStr

from memlet.config import Settings
from tests.conftest import LiveServer


def test_ready_with_database(http: httpx.Client) -> None:
    for path in ("/v1/ready/", "/v1/ready"):
        response = http.get(path)
        assert response.status_code == 200
        assert response.json() == {"version": "0.16.8", "status": "ok"}


def test_ready_in_openapi(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()
    assert spec["paths"]["/v1/ready/"]["get"]["operationId"] == "check_readiness"


def test_ready_open_behind_password(settings: Settings) -> None:
    secured = settings.model_copy(update={"server_password": SecretStr("s3cret")})
    server = LiveServer(secured).start()
    try:
        with httpx.Client(base_url=server.base_url) as http:
            assert http.get("/v1/ready/").status_code == 200
            assert http.get("/v1/agents/").status_code == 401
    finally:
        server.stop()
