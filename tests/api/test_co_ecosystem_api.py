"""co (letta-ai/co), Letta's React Native / web chat client, against memlet.

co keeps no history of its own: it groups what the server lists by message `id` (a step's reasoning with the
assistant text or tool call it led to) and pairs a tool call with its return by `step_id`, sorting by `date` (in
seconds, so ties keep the list's order); it pages older history with `before` = the first id of the last page and
stops when a page is shorter than `limit`. Its sends are background streams (`background: true`, `stream_tokens`
only on the web), whose chunk ids it keeps for the messages it shows.

co's web build runs in a browser (`expo start --web` serves it on http://localhost:8081) and calls the server straight
from the page with the TypeScript SDK, so every request is a cross-origin one: the browser first sends a CORS preflight,
then reads the answer only when it carries `Access-Control-Allow-Origin`. Letta 0.16.8 answers CORS for its built-in
origins plus the comma list in `ACCEPTABLE_ORIGINS`; memlet honours `ACCEPTABLE_ORIGINS` (or `MEMLET_CORS_ORIGINS`) and
has no built-in origins (a README compatibility note says why). The requests below are the ones a browser sends for co's
login check (`client.agents.list({limit: 1})` with its bearer token) and first chat message.
"""

from collections.abc import Iterator

import httpx
import pytest
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

MODEL = "anthropic/claude-haiku-4-5-20251001"  # what co creates its agent with
CO_WEB = "http://localhost:8081"  # Expo's web dev server
PASSWORD = "co-test-password"
# What the SDK adds to its requests, which a browser lists in the preflight.
SDK_HEADERS = "authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-package-version"


@pytest.fixture(scope="module")
def co_server(settings: Settings) -> Iterator[LiveServer]:
    """A server whose operator allowed co's origin (as with Letta: `ACCEPTABLE_ORIGINS=http://localhost:8081`),
    behind a password as a server reachable from a browser should be."""
    update = {"cors_origins": f" {CO_WEB} , https://co.example.org", "server_password": SecretStr(PASSWORD)}
    live = LiveServer(settings.model_copy(update=update)).start()
    yield live
    live.stop()


def preflight(base_url: str, origin: str, method: str = "GET", path: str = "/v1/agents/?limit=1") -> httpx.Response:
    headers = {"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": SDK_HEADERS}
    return httpx.options(base_url + path, headers=headers, timeout=10)


def test_an_allowed_origin_passes_the_preflight_without_the_password(co_server: LiveServer) -> None:
    for method, path in [("GET", "/v1/agents/?limit=1"), ("POST", "/v1/agents/agent-x/messages/stream")]:
        response = preflight(co_server.base_url, CO_WEB, method, path)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == CO_WEB
        assert response.headers["access-control-allow-credentials"] == "true"
        assert method in response.headers["access-control-allow-methods"]
        assert response.headers["access-control-allow-headers"].lower() == SDK_HEADERS
    # Each origin of the comma list counts, spaces around it or not.
    assert preflight(co_server.base_url, "https://co.example.org").headers["access-control-allow-origin"] == (
        "https://co.example.org"
    )


def test_the_page_reads_answers_and_errors_from_an_allowed_origin(co_server: LiveServer) -> None:
    auth = {"Origin": CO_WEB, "Authorization": f"Bearer {PASSWORD}"}
    ok = httpx.get(co_server.base_url + "/v1/agents/", params={"limit": 1}, headers=auth, timeout=10)
    assert ok.status_code == 200 and ok.json() == []
    assert ok.headers["access-control-allow-origin"] == CO_WEB
    # co's login screen tells a wrong token from a dead server by the 401 it can read.
    wrong = httpx.get(
        co_server.base_url + "/v1/agents/", headers={"Origin": CO_WEB, "Authorization": "Bearer nope"}, timeout=10
    )
    assert wrong.status_code == 401 and wrong.json() == {"detail": "Unauthorized"}
    assert wrong.headers["access-control-allow-origin"] == CO_WEB


def test_other_origins_get_no_cors_headers(co_server: LiveServer) -> None:
    response = preflight(co_server.base_url, "http://evil.example")
    assert response.status_code == 400 and "access-control-allow-origin" not in response.headers
    answer = httpx.get(
        co_server.base_url + "/v1/agents/",
        headers={"Origin": "http://evil.example", "Authorization": f"Bearer {PASSWORD}"},
        timeout=10,
    )
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers


def test_without_acceptable_origins_no_page_is_allowed(server: LiveServer) -> None:
    # memlet's side of the compatibility note: Letta's built-in origins (localhost:3000, app.letta.com, ...) are
    # not allowed unless listed.
    for origin in ["http://localhost:3000", "https://app.letta.com", CO_WEB]:
        response = preflight(server.base_url, origin)
        assert "access-control-allow-origin" not in response.headers
        answer = httpx.get(server.base_url + "/v1/agents/", headers={"Origin": origin}, timeout=10)
        assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers


def brief(message: object) -> tuple[str, str]:
    kind = message.message_type  # type: ignore[attr-defined]
    text = {
        "user_message": lambda m: m.content,
        "reasoning_message": lambda m: m.reasoning,
        "assistant_message": lambda m: m.content,
        "tool_call_message": lambda m: m.tool_call.name,
        "tool_return_message": lambda m: m.status,
    }[kind](message)
    return kind, text


def test_history_groups_by_id_and_step_as_co_reads_it(claude: Letta, mock_llm: MockLLM) -> None:
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "cats"}, reasoning="Let me search."),
        Reply.text("Nothing about cats.", reasoning="Nothing there."),
    )
    agent = claude.agents.create(
        name="Co", model=MODEL, system="You are co.", tags=["co-app"], tools=["conversation_search", "memory"]
    )
    stream = claude.agents.messages.stream(
        agent.id,
        messages=[{"type": "message", "role": "user", "content": "any cats?"}],
        background=True,
        stream_tokens=False,
    )
    chunks = [c for c in stream if c.message_type not in ("ping", "stop_reason", "usage_statistics")]
    assert [brief(c) for c in chunks] == [
        ("reasoning_message", "Let me search."),
        ("tool_call_message", "conversation_search"),
        ("tool_return_message", "success"),
        ("reasoning_message", "Nothing there."),
        ("assistant_message", "Nothing about cats."),
    ]
    think, call, result, think2, say = chunks
    assert think.id == call.id != result.id and think2.id == say.id != result.id
    assert call.step_id == result.step_id != say.step_id
    assert len({c.run_id for c in chunks}) == 1 and [c.seq_id for c in chunks] == sorted({c.seq_id for c in chunks})

    # Reopened, co lists the history (`limit: 100`) and sees the same messages under the same ids, oldest first.
    listed = [m for m in claude.agents.messages.list(agent.id, limit=100).items if m.message_type != "system_message"]
    assert [brief(m) for m in listed] == [("user_message", "any cats?")] + [brief(c) for c in chunks]
    assert [(m.id, m.step_id) for m in listed[1:]] == [(c.id, c.step_id) for c in chunks]
    assert [m.date for m in listed] == sorted(m.date for m in listed)

    # `limit` counts stored messages (a step's reasoning and reply are one), and `before` walks back from there.
    newest = claude.agents.messages.list(agent.id, limit=2).items
    assert [brief(m) for m in newest] == [brief(c) for c in chunks[2:]]
    older = claude.agents.messages.list(agent.id, limit=2, before=newest[0].id).items
    assert [brief(m) for m in older] == [("user_message", "any cats?")] + [brief(c) for c in chunks[:2]]
