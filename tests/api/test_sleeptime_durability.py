"""Sleeptime runs at the edges: a shutdown while every turn slot is taken leaves a queued run queued (it runs once
after the restart), and a run's ``metadata.result`` commits together with its ``completed`` status.

Each test runs its own in-process servers (`LiveServer`) on a database of its own, so it can reach the server's
turn registry and stop and restart it."""

import asyncio
import contextlib
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from memlet import ids, migrations
from memlet.actor import Actor
from memlet.config import Settings
from memlet.db.engine import async_url
from memlet.sleeptime.firing import fire_after_turn
from tests.api.sleeptime_support import SLEEPTIME_PROMPT_MARK, wait_for
from tests.api.test_security_runs_restart import fresh_db
from tests.api.test_sleeptime_restart import reviews_of, run, setup_agent, turn
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM

__all__ = ["fresh_db"]  # the fixture, shared with the run-restart tests


@pytest.fixture
def db(fresh_db: str, mock_llm: MockLLM) -> Iterator[str]:
    asyncio.run(migrations.upgrade(fresh_db))
    mock_llm.reset()
    mock_llm.script_when(SLEEPTIME_PROMPT_MARK)  # the sleeptime agent answers with the default reply
    yield fresh_db
    mock_llm.reset()  # the next test must not see these requests or this routing


@contextmanager
def serving(settings: Settings, uri: str) -> Iterator[LiveServer]:
    server = LiveServer(settings.model_copy(update={"pg_uri": uri})).start()
    try:
        yield server
    finally:
        server.stop()


def sql(uri: str, statement: str, **params: Any) -> list[Any]:
    async def go() -> list[Any]:
        engine = create_async_engine(async_url(uri))
        try:
            async with engine.begin() as conn:
                result = await conn.execute(text(statement), params)
                return list(result.all()) if result.returns_rows else []
        finally:
            await engine.dispose()

    return asyncio.run(go())


def on_server_loop(server: LiveServer, coro: Any) -> "Future[Any]":
    """Start `coro` on the server's event loop (its thread)."""
    loop = server.server.config.app.state.sleeptime_runs._task.get_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop)


def queue_firing(uri: str, main: str, last_message_id: str) -> str:
    """The firing of a main agent's turn (what `after_turn` does), while no slot is free for that turn itself."""

    async def go() -> str:
        engine = create_async_engine(async_url(uri))
        try:
            async with engine.begin() as conn:
                session = AsyncSession(bind=conn)
                actor = Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)
                (run_id,) = await fire_after_turn(session, actor, main, last_message_id)
                await session.flush()
                return str(run_id)
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_a_run_queued_while_every_slot_is_taken_stays_queued_over_a_restart(
    db: str, settings: Settings, mock_llm: MockLLM
) -> None:
    with serving(settings, db) as first:
        main, helper = setup_agent(first.base_url)
        # Frequency 2 from here: turn 1 fires (counter 0), turn 2 does not (1); the next firing is the test's.
        group = httpx.get(f"{first.base_url}/v1/groups/", timeout=30).json()[0]
        config = {"manager_config": {"manager_type": "sleeptime", "sleeptime_agent_frequency": 2}}
        assert httpx.patch(f"{first.base_url}/v1/groups/{group['id']}", json=config, timeout=30).status_code == 200
        first_run = turn(first.base_url, mock_llm, main, "turn 1")["usage"]["run_ids"][0]
        wait_for(lambda: run(first.base_url, first_run)["status"] == "completed", "the first sleeptime run")
        reply = turn(first.base_url, mock_llm, main, "turn 2")
        assert reply["usage"]["run_ids"] is None
        turns = first.server.config.app.state.run_worker.turns
        busy = [f"busy-{i}" for i in range(turns.limit)]

        async def take_every_slot() -> None:
            turns.reserved.update(busy)

        on_server_loop(first, take_every_slot()).result(timeout=10)
        last_message_id = httpx.get(f"{first.base_url}/v1/agents/{main}", timeout=30).json()["message_ids"][-1]
        queued = queue_firing(db, main, last_message_id)
        # The starter tries to start it just as the last slot is taken (it checked for room a moment before).
        attempt = on_server_loop(first, first.server.config.app.state.sleeptime_runs._start_one())
        with contextlib.suppress(TimeoutError):
            attempt.result(timeout=3)
    # The server stopped with the run still queued, not closed as failed: the starter claimed nothing.
    assert sql(db, "SELECT status, worker_id FROM runs WHERE id = :id", id=queued) == [("created", None)]
    assert sql(db, "SELECT run_id FROM queued_runs") == [(queued,)]
    assert attempt.result() is False

    with serving(settings, db) as second:
        wait_for(lambda: run(second.base_url, queued)["status"] == "completed", "the queued run after the restart")
        assert len(reviews_of(mock_llm, "user: turn 2")) == 1
        assert sql(db, "SELECT count(*) FROM queued_runs") == [(0,)]
        runs = httpx.get(f"{second.base_url}/v1/runs/", params={"agent_id": helper}, timeout=30).json()
        assert sorted(r["id"] for r in runs) == sorted([first_run, queued])


# Every version of a run row, with the transaction that wrote it: the last version a transaction wrote is what
# became visible when it committed.
RUN_VERSIONS = [
    "CREATE TABLE run_versions (seq bigserial PRIMARY KEY, run_id text, txid bigint, status text, has_result bool)",
    """CREATE FUNCTION note_run_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO run_versions (run_id, txid, status, has_result)
        VALUES (NEW.id, txid_current(), NEW.status, coalesce(NEW.metadata::jsonb ? 'result', false));
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER note_run_version AFTER INSERT OR UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION note_run_version()",
]


def test_the_result_commits_with_the_completed_status(db: str, settings: Settings, mock_llm: MockLLM) -> None:
    for statement in RUN_VERSIONS:
        sql(db, statement)
    with serving(settings, db) as server:
        main, _ = setup_agent(server.base_url)
        sleeptime_run = turn(server.base_url, mock_llm, main, "turn 1")["usage"]["run_ids"][0]
        done = wait_for(lambda: (r := run(server.base_url, sleeptime_run))["status"] == "completed" and r, "the run")
        assert done["metadata"]["result"]["stop_reason"]["message_type"] == "stop_reason"
    committed = sql(
        db,
        "SELECT DISTINCT ON (txid) status, has_result FROM run_versions WHERE run_id = :id ORDER BY txid, seq DESC",
        id=sleeptime_run,
    )
    assert ("completed", True) in committed
    assert ("completed", False) not in committed  # never visible as completed without its result
