"""Issue 7, finding 4: user-given URLs (callback_url, provider base_url, model and embedding endpoints) may not
reach loopback, link-local, private or unique-local addresses, other schemes, or names resolving to those;
MEMLET_ALLOWED_HOSTS admits exactly what it lists; redirects are not followed; failures are not echoed."""

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from memlet.config import Settings
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts
from memlet.runs.callbacks import callback_error, post_callback
from tests.api.listener import Listener, free_port, http_client, listener, start_server

ALLOWED_PORT = free_port()
VICTIM_PORT = free_port()


@pytest.fixture(scope="module")
def allowed() -> Iterator[Listener]:
    with listener(ALLOWED_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def victim() -> Iterator[Listener]:
    """A loopback service nobody allowed: it must never see a request."""
    with listener(VICTIM_PORT) as server:
        yield server


@pytest.fixture(scope="module")
def api(settings: Settings, pg_uri: str, allowed: Listener, victim: Listener) -> Iterator[httpx.Client]:
    with (
        start_server(settings, pg_uri, allowed_hosts=f"127.0.0.1:{ALLOWED_PORT}") as server,
        http_client(server) as http,
    ):
        yield http


@pytest.fixture(autouse=True)
def _clear(allowed: Listener, victim: Listener) -> None:
    for server in (allowed, victim):
        server.seen.clear()
        server.redirect_to = None
        server.status, server.body = 200, None


BLOCKED = [
    f"http://127.0.0.1:{VICTIM_PORT}/v1",
    f"http://localhost:{VICTIM_PORT}/v1",
    "http://169.254.169.254/latest/meta-data",
    "http://10.0.0.1/v1",
    f"http://[::1]:{VICTIM_PORT}/v1",
    "http://[fd00::1]/v1",
    "file:///etc/passwd",
]


def agent_body(url: str) -> dict[str, Any]:
    return {
        "name": "ssrf",
        "llm_config": {"model": "m", "model_endpoint_type": "openai", "model_endpoint": url, "context_window": 8000},
        "embedding": "openai/text-embedding-3-small",
    }


def good_agent(http: httpx.Client) -> str:
    response = http.post("/v1/agents/", json={"name": "ok", "model": "openai/gpt-4o-mini"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def good_provider(http: httpx.Client) -> str:
    body = {
        "name": f"fine-{uuid.uuid4().hex[:8]}",
        "provider_type": "openai",
        "api_key": "sk-x",
        "base_url": f"http://127.0.0.1:{ALLOWED_PORT}",
    }
    response = http.post("/v1/providers/", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def embedding_body(url: str) -> dict[str, Any]:
    embedding = {"embedding_endpoint_type": "openai", "embedding_endpoint": url}
    return {
        "name": "e",
        "model": "openai/gpt-4o-mini",
        "embedding_config": {**embedding, "embedding_model": "x", "embedding_dim": 8},
    }


def good_folder(http: httpx.Client) -> str:
    body = {"name": f"f-{uuid.uuid4().hex[:8]}", "embedding": "openai/text-embedding-3-small"}
    response = http.post("/v1/folders/", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


# (field named in the 400, request for a URL)
Request = Callable[[httpx.Client, str], httpx.Response]
REQUESTS: dict[str, tuple[str, Request]] = {
    "callback": (
        "callback_url",
        lambda h, u: h.post(
            f"/v1/agents/{good_agent(h)}/messages/async",
            json={"messages": [{"role": "user", "content": "hi"}], "callback_url": u},
        ),
    ),
    "provider_create": (
        "base_url",
        lambda h, u: h.post(
            "/v1/providers/", json={"name": "p", "provider_type": "openai", "api_key": "k", "base_url": u}
        ),
    ),
    "provider_modify": (
        "base_url",
        lambda h, u: h.patch(f"/v1/providers/{good_provider(h)}", json={"api_key": "k", "base_url": u}),
    ),
    "provider_check": (
        "base_url",
        lambda h, u: h.post("/v1/providers/check", json={"provider_type": "openai", "api_key": "k", "base_url": u}),
    ),
    "agent_create": ("llm_config.model_endpoint", lambda h, u: h.post("/v1/agents/", json=agent_body(u))),
    "agent_modify": (
        "llm_config.model_endpoint",
        lambda h, u: h.patch(f"/v1/agents/{good_agent(h)}", json={"llm_config": agent_body(u)["llm_config"]}),
    ),
    "embedding_create": (
        "embedding_config.embedding_endpoint",
        lambda h, u: h.post("/v1/agents/", json=embedding_body(u)),
    ),
    "archive_create": (
        "embedding_config.embedding_endpoint",
        lambda h, u: h.post("/v1/archives/", json=embedding_body(u)),
    ),
    "folder_create": (
        "embedding_config.embedding_endpoint",
        lambda h, u: h.post("/v1/folders/", json=embedding_body(u)),
    ),
    "folder_modify": (
        "embedding_config.embedding_endpoint",
        lambda h, u: h.patch(
            f"/v1/folders/{good_folder(h)}", json={"embedding_config": embedding_body(u)["embedding_config"]}
        ),
    ),
}


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_blocked_urls_are_400_and_never_called(api: httpx.Client, victim: Listener, kind: str) -> None:
    field, send = REQUESTS[kind]
    for url in BLOCKED:
        response = send(api, url)
        assert response.status_code == 400, (url, response.text)
        detail = response.json()["detail"]
        assert field in detail, detail
        if not url.startswith("file:"):
            assert "MEMLET_ALLOWED_HOSTS" in detail, detail
    assert victim.seen == []


def test_allow_list_admits_exactly_the_listed_host_and_port(api: httpx.Client, allowed: Listener) -> None:
    ok = api.post("/v1/agents/", json=agent_body(f"http://127.0.0.1:{ALLOWED_PORT}/v1"))
    assert ok.status_code == 200, ok.text
    with listener() as neighbour:  # same host, another port
        refused = api.post("/v1/agents/", json=agent_body(f"{neighbour.url}/v1"))
        assert refused.status_code == 400
        assert neighbour.seen == []


def test_llm_redirect_to_a_blocked_host_is_not_followed(api: httpx.Client, allowed: Listener, victim: Listener) -> None:
    created = api.post("/v1/agents/", json=agent_body(f"{allowed.url}/v1"))
    assert created.status_code == 200, created.text
    allowed.redirect_to = victim.url
    api.post(f"/v1/agents/{created.json()['id']}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
    assert [s.path for s in allowed.seen if s.path.endswith("/chat/completions")]
    assert victim.seen == []


def test_provider_check_does_not_echo_the_target(api: httpx.Client, allowed: Listener) -> None:
    allowed.status, allowed.body = 401, b"internal-banner-v1.2.3 admin console"
    body = {"provider_type": "openai", "api_key": "sk-x", "base_url": allowed.url}
    response = api.post("/v1/providers/check", json=body)
    assert response.status_code == 401
    assert "internal-banner" not in response.text

    allowed.status, allowed.body = 502, b"upstream-secret"
    response = api.post("/v1/providers/check", json=body)
    assert "upstream-secret" not in response.text and "502" not in response.text


async def test_blocked_callback_records_the_same_generic_error_as_a_dead_one(victim: Listener) -> None:
    policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{ALLOWED_PORT}"))
    blocked = await post_callback(f"{victim.url}/hook", {"x": 1}, run_id="run-1", policy=policy, timeout_s=2)
    dead_port = free_port()
    dead_policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{dead_port}"))
    dead_url = f"http://127.0.0.1:{dead_port}/hook"
    dead = await post_callback(dead_url, {"x": 1}, run_id="run-1", policy=dead_policy, timeout_s=2)
    assert victim.seen == []
    assert blocked.status_code is None and blocked.error == callback_error("run-1", f"{victim.url}/hook")
    assert dead.error == callback_error("run-1", dead_url)
    assert blocked.error.split(": ", 1)[1] == dead.error.split(": ", 1)[1]


async def test_callback_redirect_to_a_blocked_host_is_not_followed(allowed: Listener, victim: Listener) -> None:
    allowed.redirect_to = victim.url
    policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{ALLOWED_PORT}"))
    outcome = await post_callback(f"{allowed.url}/hook", {"x": 1}, run_id="run-2", policy=policy, timeout_s=2)
    assert outcome.status_code == 307 and len(allowed.seen) == 1
    assert victim.seen == []
