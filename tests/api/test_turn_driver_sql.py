"""The turn's hot statements run on the asyncpg connection beneath SQLAlchemy's (`memlet.db.driver`): the rows they
write are the rows the ORM and Core wrote (SQL NULL in a step's unset JSONB columns, never JSON ``null``), the
statement counters still see every one of them, and they stay inside SQLAlchemy's transaction."""

import asyncio
import json
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError

from memlet.config import Settings
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.engine import create_engine, create_sessionmaker
from tests.api.test_send_sql_budget import AGENT, recorded, send
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM


def _rows(pg_uri: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    async def fetch() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(pg_uri)
        try:
            return list(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    return asyncio.run(fetch())


@pytest.fixture
def sent(http: httpx.Client, mock_llm: MockLLM) -> dict[str, Any]:
    mock_llm.reset()
    agent_id = http.post("/v1/agents/", json=AGENT).json()["id"]
    response = send(http, agent_id)
    assert response.status_code == 200, response.text
    return {"agent_id": agent_id, "run_id": response.json()["messages"][0]["run_id"]}


class TestStepRow:
    def test_unset_jsonb_columns_are_sql_null(self, pg_uri: str, sent: dict[str, Any]) -> None:
        [step] = _rows(
            pg_uri,
            "SELECT status, tags, error_data IS NULL AS no_error, step_metrics IS NULL AS no_metrics,"
            " jsonb_typeof(tags) AS tags_type, created_at, updated_at, completion_tokens, prompt_tokens,"
            " cached_input_tokens, feedback, organization_id FROM steps WHERE run_id = $1",
            sent["run_id"],
        )
        assert step["no_error"] and not step["no_metrics"]  # SQL NULL as the ORM wrote it, not JSON null; timings
        assert step["tags_type"] == "array" and step["tags"] == "[]"
        assert step["status"] == "success" and step["prompt_tokens"] > 0 and step["completion_tokens"] > 0
        assert step["cached_input_tokens"] is None and step["feedback"] is None
        assert step["created_at"] is not None and step["updated_at"] >= step["created_at"]  # each its own default
        assert step["organization_id"]

    def test_run_row_as_core_wrote_it(self, pg_uri: str, sent: dict[str, Any]) -> None:
        [run] = _rows(
            pg_uri,
            "SELECT status, stop_reason, num_steps, jsonb_typeof(tools_used) AS tools, metadata, completed_at,"
            " jsonb_typeof(otids) AS otids, callback_url, created_at <= updated_at AS ordered FROM runs WHERE id = $1",
            sent["run_id"],
        )
        assert (run["status"], run["stop_reason"], run["num_steps"]) == ("completed", "end_turn", 1)
        assert run["tools"] == "array" and run["completed_at"] is not None and run["ordered"]
        assert run["otids"] == "null" and run["callback_url"] is None  # set to None: JSON null, as before
        assert json.loads(run["metadata"]) == {"run_type": "send_message"}  # a json column: the text as written


def test_driver_statements_are_counted(server: LiveServer, http: httpx.Client, sent: dict[str, Any]) -> None:
    """Every statement a send sends through the driver reaches `before_cursor_execute` listeners."""
    with recorded(server) as trace:
        response = send(http, sent["agent_id"])
    statements, _ = trace.of_run(response.json()["messages"][0]["run_id"])
    flat = [" ".join(sql.split()) for sql in statements]
    for expected in (
        "WITH agent AS",
        "SELECT pg_try_advisory_lock(",
        "WITH started AS (INSERT INTO runs",  # the run started by the load's first statement
        "WITH stepped AS (INSERT INTO steps",  # the step's one write statement (`runs.step_write`)
        "SELECT pg_advisory_unlock(",
    ):
        assert any(sql.startswith(expected) for sql in flat), (expected, flat)
    [write] = [sql for sql in flat if sql.startswith("WITH stepped AS")]
    for part in ("INSERT INTO messages", "UPDATE agents SET message_ids=", "pg_advisory_xact_lock(", "UPDATE runs SET"):
        assert part in write, (part, write)


async def test_driver_runs_inside_sqlalchemy_transaction(pg_uri: str) -> None:
    """A driver statement is sent inside the transaction SQLAlchemy began (its ROLLBACK undoes it), and its
    listeners see it; a constraint violation comes back as SQLAlchemy's IntegrityError."""
    engine = create_engine(pg_uri, Settings())
    maker = create_sessionmaker(engine)
    insert = DriverSQL(
        text("INSERT INTO organizations (id, name, privileged_tools) VALUES (:id, :name, false) RETURNING id")
    )
    seen: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    try:
        async with maker() as session, session.begin():
            driver = await driver_of(session)
            assert await driver.fetchval(insert, {"id": "org-driver-test", "name": "x"}) == "org-driver-test"
            assert await driver_of(session) is driver  # one per transaction
            await session.rollback()
        async with maker() as session:
            count = await session.scalar(text("SELECT count(*) FROM organizations WHERE id = 'org-driver-test'"))
        assert count == 0
        assert any("INSERT INTO organizations" in sql for sql in seen)
        async with maker() as session, session.begin():
            driver = await driver_of(session)
            await driver.fetchval(insert, {"id": "org-driver-dup", "name": "x"})
            with pytest.raises(IntegrityError):
                await driver.fetchval(insert, {"id": "org-driver-dup", "name": "x"})
            await session.rollback()
    finally:
        await engine.dispose()
