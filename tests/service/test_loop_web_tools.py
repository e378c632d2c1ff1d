"""The web tools through the agent loop: the model calls `fetch_webpage` or `web_search`, and the next request
carries the tool return Letta 0.16.8 would give it. Pages come from the mock's own server (allowed by the outbound
policy because it is the configured OpenAI base URL); Exa is the mock's fake API at `<mock>/exa`."""

import dataclasses
import json
from typing import Any

import pytest
from pydantic import SecretStr

from memlet.config import Settings
from memlet.db import models as orm
from memlet.loop.runner import LoopDeps
from memlet.net.fetch import Fetcher
from memlet.tool_exec import webpage
from tests.mock_llm import EXA_UNKNOWN, MOCK_EXA_KEY, Reply
from tests.mock_llm.web import PUBLISHED
from tests.service.loop_factories import LoopEnv, loop_env
from tests.service.test_loop_streaming import views

__all__ = ["loop_env"]

EXA_SECRET = [{"key": "EXA_API_KEY", "value": MOCK_EXA_KEY}]
NO_KEY = (
    "Error executing function web_search: ValueError: EXA_API_KEY is not set in environment or on agent_state "
    "tool execution environment variables."
)


def with_settings(env: LoopEnv, **changes: Any) -> LoopEnv:
    """`env` whose loop runs under its settings changed by `changes`."""
    settings: Settings = env.deps.settings.model_copy(update=changes)
    deps: LoopDeps = dataclasses.replace(env.deps, settings=settings)
    return dataclasses.replace(env, deps=deps)


@pytest.fixture
def web_env(loop_env: LoopEnv, mock_llm: Any) -> LoopEnv:
    """The loop with Exa at the mock and no server key (the agent's secret decides)."""
    return with_settings(loop_env, exa_base_url=f"{mock_llm.root_url}/exa")


@pytest.fixture
def fetches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL memlet's one-off HTTP stack is asked to request (a refused URL must never get this far)."""
    seen: list[str] = []
    real = Fetcher.request

    async def spy(self: Fetcher, method: str, url: str, **kwargs: Any) -> Any:
        seen.append(url)
        return await real(self, method, url, **kwargs)

    monkeypatch.setattr(Fetcher, "request", spy)
    return seen


async def call(env: LoopEnv, mock_llm: Any, agent: orm.Agent, name: str, args: dict[str, Any]) -> tuple[dict, Any]:
    """Have the model call one tool, then answer; the packed return the model read and the tool return message."""
    mock_llm.script(Reply.tool_call(name, args), Reply.text("ok"))
    out = await env.send(agent, "please")
    assert out.final.stop_reason == "end_turn"
    sent = [m for m in mock_llm.requests[-1]["messages"] if m["role"] == "tool"][-1]
    shown = next(v for v in views(out.messages) if v.message_type == "tool_return_message")
    return json.loads(sent["content"]), shown


class TestFetchWebpage:
    async def test_a_page_becomes_markdown(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        url = f"{mock_llm.root_url}/_mock/page.html"
        returned, shown = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        text = returned["message"]
        assert returned["status"] == "OK"
        assert text.startswith("# A short history of teapots")
        assert "**Yuan dynasty**" in text and "- Yixing clay\n- Porcelain" in text
        assert "Copyright mock" not in text and "Shop" not in text  # boilerplate left out
        assert (shown.status, shown.tool_return) == ("success", text)
        assert mock_llm.exa_requests == []  # no key: Exa is never asked

    async def test_a_redirect_is_followed(self, web_env: LoopEnv, mock_llm, fetches: list[str]) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        url = f"{mock_llm.root_url}/_mock/redirect"
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        assert returned["message"].startswith("# A short history of teapots")
        assert fetches == [url, f"{mock_llm.root_url}/_mock/page.html"]

    async def test_exa_gives_the_text_when_the_agent_has_a_key(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"], secrets=EXA_SECRET)
        url = "https://example.com/teapots"
        returned, shown = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        expected = {"title": "Teapots (Exa)", "published_date": PUBLISHED, "author": "Exa Author"}
        assert json.loads(returned["message"]) == {**expected, "text": f"Exa's text of {url}"}
        assert shown.status == "success"
        assert mock_llm.exa_requests == [
            {"endpoint": "contents", "x-api-key": MOCK_EXA_KEY, "body": {"urls": [url], "text": True}}
        ]

    async def test_a_page_exa_does_not_know_is_downloaded(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"], secrets=EXA_SECRET)
        url = f"{mock_llm.root_url}/_mock/page.html?{EXA_UNKNOWN}"
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        assert returned["message"].startswith("# A short history of teapots")
        assert [r["endpoint"] for r in mock_llm.exa_requests] == ["contents"]

    async def test_exa_refusing_the_key_is_a_tool_error(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"], secrets=[{"key": "EXA_API_KEY", "value": "wrong"}])
        args = {"url": "https://example.com/teapots"}
        returned, shown = await call(web_env, mock_llm, agent, "fetch_webpage", args)
        assert returned["status"] == "Failed"
        assert returned["message"].startswith(
            "Error executing function fetch_webpage: ValueError: Request failed with status code 401: "
        )
        assert "Invalid API key" in returned["message"]
        assert shown.status == "error"

    async def test_a_private_address_is_refused_without_a_request(
        self, web_env: LoopEnv, mock_llm, fetches: list[str]
    ) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        url = "http://169.254.169.254/latest/meta-data/"
        returned, shown = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        assert returned["status"] == "Failed"
        assert returned["message"].startswith(f"Error executing function fetch_webpage: PermissionError: url {url!r}")
        assert "is not allowed" in returned["message"] and "MEMLET_ALLOWED_HOSTS" in returned["message"]
        assert shown.status == "error"
        assert fetches == []

    async def test_a_redirect_to_a_private_address_is_refused(
        self, web_env: LoopEnv, mock_llm, fetches: list[str]
    ) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        url = f"{mock_llm.root_url}/_mock/redirect?to=http://10.1.2.3/admin"
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        assert "PermissionError: url 'http://10.1.2.3/admin' is not allowed" in returned["message"]
        assert fetches == [url]

    async def test_other_schemes_get_lettas_error(self, web_env: LoopEnv, mock_llm, fetches: list[str]) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": "file:///etc/passwd"})
        assert returned["message"] == (
            "Error executing function fetch_webpage: ValueError: Invalid URL scheme 'file'. Only 'http' and 'https' "
            "URLs are supported. Local file paths (file://) and other protocols cannot be fetched."
        )
        assert fetches == []

    async def test_an_error_status_is_reported(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["fetch_webpage"])
        url = f"{mock_llm.root_url}/_mock/no-such-page"
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", {"url": url})
        assert returned["message"] == (
            f"Error executing function fetch_webpage: Exception: Error fetching webpage: 404 Client Error: "
            f"Not Found for url: {url}"
        )

    async def test_a_page_past_the_size_limit_is_refused(
        self, web_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(webpage, "MAX_PAGE_BYTES", 100)
        agent = await web_env.agent(tools=["fetch_webpage"])
        args = {"url": f"{mock_llm.root_url}/_mock/page.html"}
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", args)
        assert returned["message"] == (
            "Error executing function fetch_webpage: Exception: Error fetching webpage: the page is larger than 100 bytes"
        )

    async def test_a_slow_page_stops_at_the_deadline(
        self, web_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(webpage, "PAGE_DEADLINE_S", 0.2)
        agent = await web_env.agent(tools=["fetch_webpage"])
        args = {"url": f"{mock_llm.root_url}/_mock/slow-page.html?s=2"}
        returned, _ = await call(web_env, mock_llm, agent, "fetch_webpage", args)
        assert "Error fetching webpage: the page took longer than" in returned["message"]


class TestWebSearch:
    async def test_without_a_key_it_is_lettas_error(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["web_search"])
        returned, shown = await call(web_env, mock_llm, agent, "web_search", {"query": "teapots"})
        assert (returned["status"], returned["message"]) == ("Failed", NO_KEY)
        assert (shown.status, shown.tool_return) == ("error", NO_KEY)
        assert mock_llm.exa_requests == []

    async def test_the_agents_key_searches_exa(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["web_search"], secrets=EXA_SECRET)
        args = {
            "query": "teapots",
            "num_results": 250,
            "category": "news",
            "include_domains": ["example.com"],
            "start_published_date": "2024-01-01",
            "user_location": "GB",
        }
        returned, shown = await call(web_env, mock_llm, agent, "web_search", args)
        [sent] = mock_llm.exa_requests
        assert (sent["endpoint"], sent["x-api-key"]) == ("search", MOCK_EXA_KEY)
        assert sent["body"] == {
            "query": "teapots",
            "numResults": 100,
            "type": "auto",
            "category": "news",
            "includeDomains": ["example.com"],
            "startPublishedDate": "2024-01-01",
            "userLocation": "GB",
            "contents": {
                "text": False,
                "highlights": {"numSentences": 2, "highlightsPerUrl": 3, "query": "teapots"},
                "summary": {"query": "Summarize the key information from this content related to: teapots"},
            },
        }
        first = {"title": "Result 1 for teapots", "url": "https://example.com/1", "published_date": PUBLISHED}
        second = {"title": "Result 2 for teapots", "url": "https://example.com/2", "published_date": None}
        expected = {
            "query": "teapots",
            "results": [
                {**first, "author": None, "highlights": ["Highlight 1"], "summary": "Summary 1"},
                {**second, "author": None, "highlights": ["Highlight 2"]},
            ],
        }
        assert returned["message"] == json.dumps(expected, indent=2, ensure_ascii=False)
        assert (returned["status"], shown.status) == ("OK", "success")

    async def test_the_servers_key_and_page_text(self, loop_env: LoopEnv, mock_llm) -> None:
        env = with_settings(loop_env, exa_base_url=f"{mock_llm.root_url}/exa", exa_api_key=SecretStr(MOCK_EXA_KEY))
        agent = await env.agent(tools=["web_search"])
        args = {"query": "teapots", "num_results": 1, "include_text": True}
        returned, _ = await call(env, mock_llm, agent, "web_search", args)
        [sent] = mock_llm.exa_requests
        assert sent["x-api-key"] == MOCK_EXA_KEY
        assert (sent["body"]["numResults"], sent["body"]["contents"]["text"]) == (1, True)
        assert json.loads(returned["message"])["results"][0]["text"] == "Full text 1"

    async def test_an_empty_query_is_refused_before_the_key(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["web_search"])
        returned, _ = await call(web_env, mock_llm, agent, "web_search", {"query": "  "})
        assert json.loads(returned["message"]) == {"error": "Query cannot be empty", "query": "  "}
        assert returned["status"] == "OK"

    async def test_a_failed_search_is_returned_not_raised(self, web_env: LoopEnv, mock_llm) -> None:
        agent = await web_env.agent(tools=["web_search"], secrets=[{"key": "EXA_API_KEY", "value": "wrong"}])
        returned, _ = await call(web_env, mock_llm, agent, "web_search", {"query": "teapots"})
        result = json.loads(returned["message"])
        assert result["query"] == "teapots"
        assert result["error"].startswith("Search failed: Request failed with status code 401: ")
        assert returned["status"] == "OK"
