"""What a blocking send costs Postgres: the SQL statements and round trips (statements plus BEGIN, COMMIT and
ROLLBACK) of a one-step and a two-step turn. The budgets are today's counts: a change that adds a query or a
transaction to the send path fails here and must say why (and lower or raise the number on purpose).

Only the request's own work is counted: its handler and its turn task ("run <id>"). Timers that run beside it
(the run worker's leases and sweeps, the message indexer, the shared cancel poller) are not per-request work.
"""

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import event

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}
ONE_STEP_STATEMENTS, ONE_STEP_ROUND_TRIPS = 16, 26
TWO_STEP_STATEMENTS, TWO_STEP_ROUND_TRIPS = 25, 41
_CANCEL_POLL = "FROM runs WHERE runs.id IN"  # the shared poller's one statement for every run in flight


def _request_work(statement: str | None = None) -> bool:
    task = asyncio.current_task()
    name = task.get_name() if task is not None else ""
    if not (name.startswith("run ") or name.startswith("Task-")):
        return False  # a named background task: the indexer, the run worker
    return statement is None or _CANCEL_POLL not in " ".join(statement.split())


@contextmanager
def recorded(server: LiveServer) -> Iterator[tuple[list[str], list[str]]]:
    """(statements, transaction control) sent for the request while the block runs."""
    statements: list[str] = []
    control: list[str] = []
    app: Any = server.server.config.app

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if _request_work(statement):
            statements.append(statement)

    execute = asyncpg.Connection.execute

    async def counting(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> str:
        if _request_work():
            control.append(query)
        return await execute(self, query, *args, **kwargs)

    engines = [app.state.engine.sync_engine, app.state.turn_engine.sync_engine]
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    asyncpg.Connection.execute = counting  # type: ignore[method-assign]
    try:
        yield statements, control
    finally:
        asyncpg.Connection.execute = execute  # type: ignore[method-assign]
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def agent_id(http: httpx.Client) -> str:
    agent = http.post("/v1/agents/", json=AGENT).json()["id"]
    send(http, agent).raise_for_status()  # warm-up: first-use work (pools, caches) is not a turn's cost
    return str(agent)


def send(http: httpx.Client, agent_id: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})


class TestSendSqlBudget:
    def test_one_step_send(self, server: LiveServer, http: httpx.Client, agent_id: str) -> None:
        with recorded(server) as (statements, control):
            response = send(http, agent_id)
        assert response.json()["usage"]["step_count"] == 1
        assert len(statements) <= ONE_STEP_STATEMENTS, statements
        assert len(statements) + len(control) <= ONE_STEP_ROUND_TRIPS, [*statements, *control]

    def test_two_step_send(self, server: LiveServer, http: httpx.Client, agent_id: str, mock_llm: MockLLM) -> None:
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("found it"))
        with recorded(server) as (statements, control):
            response = send(http, agent_id)
        assert response.json()["usage"]["step_count"] == 2
        assert len(statements) <= TWO_STEP_STATEMENTS, statements
        assert len(statements) + len(control) <= TWO_STEP_ROUND_TRIPS, [*statements, *control]
