"""Browser origins, as the Obsidian plugin (letta-obsidian) needs them: its letta-client calls run in Obsidian's
renderer, whose pages have the origin ``app://obsidian.md``, so every call is a CORS request (the SDK's ``X-Fern-*``
headers make even a GET preflighted). Against a self-hosted Letta 0.16.8 the user lists that origin in
``ACCEPTABLE_ORIGINS`` (``settings.py`` cors_origins; ``server/rest_api/app.py`` adds Starlette's CORSMiddleware with
credentials, any method and any header). memlet takes the same setting (or ``MEMLET_CORS_ORIGINS``) and, unlike
Letta, lets no origin in by default."""

from collections.abc import Iterator

import httpx
import pytest

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database

OBSIDIAN = "app://obsidian.md"
# What the old SDK (0.0.x, Fern) sends besides the JSON content type.
SDK_HEADERS = "authorization,content-type,x-fern-language,x-fern-sdk-name,x-fern-sdk-version,x-fern-runtime"


@pytest.fixture
def cors_server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    server = LiveServer(settings.model_copy(update={"cors_origins": f"{OBSIDIAN}, http://localhost:5173"})).start()
    try:
        yield server
    finally:
        server.stop()
        reset_database(pg_uri)


def preflight(http: httpx.Client, path: str, origin: str) -> httpx.Response:
    headers = {"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": SDK_HEADERS}
    return http.options(path, headers=headers)


def test_a_listed_origin_may_call_the_api(cors_server: LiveServer) -> None:
    with httpx.Client(base_url=cors_server.base_url) as http:
        allowed = preflight(http, "/v1/agents/", OBSIDIAN)
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == OBSIDIAN
        assert allowed.headers["access-control-allow-credentials"] == "true"
        assert "x-fern-sdk-name" in allowed.headers["access-control-allow-headers"].lower()

        body = {"model": "openai/gpt-4o-mini", "embedding": "openai/text-embedding-3-small", "name": "vault"}
        created = http.post("/v1/agents/", json=body, headers={"Origin": OBSIDIAN})
        assert created.status_code == 200, created.text
        assert created.headers["access-control-allow-origin"] == OBSIDIAN
        listed = http.get("/v1/agents/", headers={"Origin": OBSIDIAN, "X-Fern-SDK-Name": "@letta-ai/letta-client"})
        assert "vault" in [a["name"] for a in listed.json()]
        assert listed.headers["access-control-allow-origin"] == OBSIDIAN

        # Another origin gets no CORS header, so its page cannot read the answer (nor send a preflighted request).
        assert preflight(http, "/v1/agents/", "https://evil.example").status_code == 400
        other = http.get("/v1/agents/", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_no_origin_is_let_in_by_default(server: LiveServer) -> None:
    # Letta let http://localhost:3000 (and four others) in without being asked; memlet only what is listed.
    with httpx.Client(base_url=server.base_url) as http:
        for origin in (OBSIDIAN, "http://localhost:3000"):
            answer = preflight(http, "/v1/agents/", origin)
            assert "access-control-allow-origin" not in answer.headers
            assert "access-control-allow-origin" not in http.get("/v1/agents/", headers={"Origin": origin}).headers
