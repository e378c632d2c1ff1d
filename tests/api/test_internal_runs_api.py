"""``GET /v1/_internal_runs/``: Letta Cloud's run filters (run id, template family, project, step count, tools,
duration, percentile, dates) and the duration sort, through httpx (letta-client has no internal methods) after
real sends through the mock LLM."""

import asyncio
from typing import Any

import httpx
import pytest
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
URL = "/v1/_internal_runs/"
SECOND = 1_000_000_000


def set_durations(pg_uri: str, durations: dict[str, int]) -> None:
    """Give runs known durations (real ones are a few milliseconds, in no reliable order)."""

    async def write() -> None:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.begin() as conn:
            for run_id, ns in durations.items():
                await conn.execute(
                    text("UPDATE runs SET total_duration_ns = :ns WHERE id = :id"), {"ns": ns, "id": run_id}
                )
        await engine.dispose()

    asyncio.run(write())


def send(http: httpx.Client, agent_id: str) -> str:
    resp = http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
    assert resp.status_code == 200, resp.text
    return str(resp.json()["messages"][0]["run_id"])


def listed(http: httpx.Client, **params: Any) -> list[str]:
    resp = http.get(URL, params=params)
    assert resp.status_code == 200, resp.text
    return [r["id"] for r in resp.json()]


@pytest.fixture
def runs(http: httpx.Client, client: Letta, mock_llm: MockLLM, pg_uri: str) -> dict[str, Any]:
    """Three runs: ``tool`` (agent of template family tpl-a in project p1; memory_insert then a reply: 2 steps,
    3 s), ``plain`` (another agent; 1 step, 1 s) and ``late`` (the first agent again; 1 step, 2 s)."""
    family = client.agents.create(
        name="family",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "human", "value": "Bob"}],
        project_id="p1",
        base_template_id="tpl-a",
        template_id="tpl-a-v1",
    )
    other = client.agents.create(name="other", model=MODEL, embedding=EMBEDDING)
    mock_llm.script(
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Bob has a cat."}), Reply.text("ok")
    )
    tool = send(http, family.id)
    plain = send(http, other.id)
    late = send(http, family.id)
    set_durations(pg_uri, {tool: 3 * SECOND, plain: 1 * SECOND, late: 2 * SECOND})
    return {"tool": tool, "plain": plain, "late": late, "family": family.id}


class TestFilters:
    def test_run_id(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert listed(http, run_id=runs["plain"]) == [runs["plain"]]
        assert listed(http, run_id="run-00000000-0000-4000-8000-000000000000") == []

    def test_template_family_and_project(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert set(listed(http, template_family="tpl-a")) == {runs["tool"], runs["late"]}
        assert listed(http, template_family="tpl-b") == []
        assert set(listed(http, project_id="p1")) == {runs["tool"], runs["late"]}
        assert listed(http, project_id="p2") == []

    def test_step_count_with_operator(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert listed(http, step_count=2) == [runs["tool"]]
        assert set(listed(http, step_count=1, step_count_operator="lte")) == {runs["plain"], runs["late"]}
        assert len(listed(http, step_count=1, step_count_operator="gte")) == 3
        assert http.get(URL, params={"step_count": 1, "step_count_operator": "gt"}).status_code == 422

    def test_tools_used_by_name_or_id(self, http: httpx.Client, client: Letta, runs: dict[str, Any]) -> None:
        assert listed(http, tools_used=["memory_insert"]) == [runs["tool"]]
        tool_id = next(t.id for t in client.tools.list(name="memory_insert"))
        assert listed(http, tools_used=[tool_id, "web_search"]) == [runs["tool"]]
        assert listed(http, tools_used=["web_search"]) == []

    def test_duration_value_and_operator(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert set(listed(http, duration_value=SECOND + 1, duration_operator="gt")) == {runs["tool"], runs["late"]}
        assert listed(http, duration_value=2 * SECOND, duration_operator="lt") == [runs["plain"]]
        assert listed(http, duration_value=2 * SECOND, duration_operator="eq") == [runs["late"]]
        # As in Letta, a value without an operator filters nothing.
        assert len(listed(http, duration_value=2 * SECOND)) == 3
        assert http.get(URL, params={"duration_value": 1, "duration_operator": "gte"}).status_code == 422

    def test_duration_percentile(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert set(listed(http, duration_percentile=50)) == {runs["tool"], runs["late"]}
        assert listed(http, duration_percentile=100) == [runs["tool"]]
        # The percentile is taken over the same agents: among the family's runs (2 s, 3 s) the median is 2.5 s.
        assert listed(http, duration_percentile=50, agent_id=runs["family"]) == [runs["tool"]]
        for bad in (0, 101):
            resp = http.get(URL, params={"duration_percentile": bad})
            assert resp.status_code == 400
            assert "duration_percentile" in resp.json()["detail"]

    def test_start_and_end_date(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        created = {r["id"]: r["created_at"] for r in http.get(URL).json()}
        assert listed(http, start_date=created[runs["late"]]) == [runs["late"]]
        assert listed(http, end_date=created[runs["tool"]]) == [runs["tool"]]
        window = listed(http, start_date=created[runs["tool"]], end_date=created[runs["plain"]], order="asc")
        assert window == [runs["tool"], runs["plain"]]
        assert http.get(URL, params={"start_date": "yesterday"}).status_code == 422


class TestOrderByDuration:
    def test_slowest_first_then_fastest_first(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        assert listed(http, order_by="duration") == [runs["tool"], runs["late"], runs["plain"]]
        assert listed(http, order_by="duration", order="asc") == [runs["plain"], runs["late"], runs["tool"]]

    def test_pages_follow_the_duration_order(self, http: httpx.Client, runs: dict[str, Any]) -> None:
        first = listed(http, order_by="duration", limit=2)
        assert first == [runs["tool"], runs["late"]]
        assert listed(http, order_by="duration", limit=2, after=first[-1]) == [runs["plain"]]

    def test_runs_without_duration_are_left_out(self, http: httpx.Client, pg_uri: str, runs: dict[str, Any]) -> None:
        set_durations(pg_uri, {runs["plain"]: None})  # type: ignore[dict-item]
        assert listed(http, order_by="duration") == [runs["tool"], runs["late"]]
        assert len(listed(http)) == 3

    def test_unknown_order_by_is_422(self, http: httpx.Client) -> None:
        assert http.get(URL, params={"order_by": "name"}).status_code == 422
