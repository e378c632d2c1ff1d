"""`GET /metrics`: Prometheus text with request, run, LLM, tool, lock and pool metrics, behind the password."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from letta_client import Letta
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from memlet.config import Settings
from tests.conftest import LiveServer, free_port
from tests.mock_llm import Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

ECHO = '''
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text
'''


def scrape(http: httpx.Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


class TestMetrics:
    def test_request_counter_uses_the_route_template(self, http: httpx.Client) -> None:
        before = scrape(http)
        missing = "agent-00000000-0000-4000-8000-000000000000"
        for _ in range(3):
            assert http.get(f"/v1/agents/{missing}").status_code == 404
        after = scrape(http)
        labels = {"method": "GET", "route": "/v1/agents/{agent_id}", "status": "404"}
        assert (
            value(after, "memlet_http_requests_total", **labels) - value(before, "memlet_http_requests_total", **labels)
            == 3
        )
        timed = {"method": "GET", "route": "/v1/agents/{agent_id}"}
        assert value(after, "memlet_http_request_duration_seconds_count", **timed) >= 3
        assert not any(missing in str(key) for key in after)  # no raw ids as labels

    def test_slash_retried_request_counted_once_under_its_route(self, http: httpx.Client) -> None:
        labels = {"method": "GET", "route": "/v1/agents/", "status": "200"}
        before = value(scrape(http), "memlet_http_requests_total", **labels)
        assert http.get("/v1/agents").status_code == 200  # served by the "/v1/agents/" route
        assert value(scrape(http), "memlet_http_requests_total", **labels) - before == 1

    def test_send_counts_run_llm_call_and_tool(self, http: httpx.Client, client: Letta, mock_llm: Any) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=[])
        tool = client.tools.create(source_code=ECHO)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        before = scrape(http)
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("echo", {"text": "hi"}), Reply.text("done"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "echo hi"}])
        after = scrape(http)

        def delta(name: str, **labels: str) -> float:
            return value(after, name, **labels) - value(before, name, **labels)

        assert delta("memlet_runs_total", status="completed", stop_reason="end_turn") == 1
        assert delta("memlet_llm_calls_total", provider="openai", outcome="ok") == 2
        assert delta("memlet_llm_call_duration_seconds_count", provider="openai") == 2
        assert delta("memlet_tool_executions_total", tool_type="custom", status="success") == 1
        assert delta("memlet_agent_lock_wait_seconds_count", outcome="acquired") == 1
        assert value(after, "memlet_db_pool_connections", state="size") >= 1

    def test_llm_errors_counted_by_type(self, http: httpx.Client, client: Letta, mock_llm: Any) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=[])
        before = scrape(http)
        mock_llm.reset()
        mock_llm.script(Reply.error(400, message="bad request"))
        response = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "x"}]})
        assert response.status_code >= 400
        after = scrape(http)
        errors = {
            dict(labels)["outcome"]: after[(name, labels)] - before.get((name, labels), 0.0)
            for name, labels in after
            if name == "memlet_llm_calls_total" and dict(labels)["outcome"] != "ok"
        }
        assert sum(errors.values()) == 1


class TestMetricsAuth:
    def test_needs_the_password(self, settings: Settings) -> None:
        server = LiveServer(settings.model_copy(update={"server_password": SecretStr("metrics-pw")})).start()
        try:
            with httpx.Client(base_url=server.base_url) as http:
                assert http.get("/metrics").status_code == 401
                ok = http.get("/metrics", headers={"Authorization": "Bearer metrics-pw"})
                assert ok.status_code == 200
                assert "memlet_http_requests_total" in ok.text
        finally:
            server.stop()


class TestMetricsWorkers:
    def test_two_workers_report_the_sum(self, pg_uri: str, tmp_path: Path) -> None:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLET_", "LETTA_", "PROMETHEUS_"))}
        env.update(MEMLET_PG_URI=pg_uri, MEMLET_MIGRATE_ON_START="false", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlet", "server", "--port", str(port), "--workers", "2"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/v1/health/", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            for _ in range(30):  # a new connection each time, so both workers answer some
                assert httpx.get(f"{url}/v1/tags/").status_code == 200
            for _ in range(3):  # whichever worker answers the scrape
                with httpx.Client(base_url=url) as http:
                    samples = scrape(http)
                labels = {"method": "GET", "route": "/v1/tags/", "status": "200"}
                assert value(samples, "memlet_http_requests_total", **labels) == 30
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
