"""Test harness: one embedded Postgres + pgvector per run, built by Alembic; a mock LLM; a live uvicorn server.

Fixtures are lazy: unit tests that need none of them start nothing.
"""

import asyncio
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from memlet import migrations
from memlet.app import create_app
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from memlet.db.engine import async_url

TEST_DB = "memlet_test"
# Tables emptied between API tests; organizations, users and base tools stay.
RESET_SQL = (
    "TRUNCATE agents, agents_tags, blocks, blocks_agents, identities, identities_agents, identities_blocks, "
    "messages, message_embeddings, runs, run_chunks, steps, providers, tools_agents, archives, archives_agents, passages, sources, sources_agents, "
    "files, file_contents, files_agents, jobs, batch_items, conversations, conversation_messages, conversation_blocks, "
    "mcp_servers, mcp_oauth_sessions, groups, groups_agents, groups_blocks, queued_runs CASCADE",
    "DELETE FROM tools WHERE tool_type NOT LIKE 'letta%'",
    "DELETE FROM users WHERE id <> 'user-00000000-0000-4000-8000-000000000000'",
)


@pytest.fixture(scope="session")
def embedded_pg() -> Iterator[EmbeddedPostgres]:
    # Its own temp dir (not pytest's numbered basetemp, which a concurrent pytest run may prune).
    root = Path(tempfile.mkdtemp(prefix="memlet-test-pg-"))
    server = EmbeddedPostgres(root / "pgdata", database=TEST_DB)
    server.start()
    # The suite's servers share this cluster: the session server's idle pools plus a load test's 51 turn
    # connections came near Postgres' default 100 ("too many clients"). Room for them, set before any test runs.
    with (root / "pgdata" / "postgresql.auto.conf").open("a") as conf:
        conf.write("\nmax_connections = 300\n")
    server.stop()
    server.start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_uri(embedded_pg: EmbeddedPostgres) -> str:
    uri = embedded_pg.start()
    asyncio.run(migrations.upgrade(uri))
    return uri


@pytest.fixture(scope="session")
def mock_llm() -> Iterator["object"]:
    from tests.mock_llm import MockLLM

    mock = MockLLM.start()
    yield mock
    mock.stop()


@pytest.fixture(scope="session")
def settings(pg_uri: str, mock_llm: "object") -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        pg_uri=pg_uri,
        host="127.0.0.1",  # what LiveServer binds: the loopback Host check is active in tests
        openai_api_key="sk-mock",
        openai_base_url=mock_llm.base_url,  # type: ignore[attr-defined]
        exa_api_key=None,  # a developer's EXA_API_KEY must not reach the web tools' tests
        llm_timeout_s=5,
        llm_retry_base_delay_s=0.05,
        tool_timeout_s=10,
        shutdown_grace_s=5,  # LiveServer.stop waits 10 s for the server thread
        log_level="WARNING",
        gc_freeze=False,  # the servers share this process: its test objects must stay collectable
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """A real uvicorn serving ``create_app(settings)`` in a background thread."""

    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        self.base_url = f"http://{settings.host}:{self.port}"
        config = uvicorn.Config(create_app(settings), host=settings.host, port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base_url}/v1/health/", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("live server did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server(settings: Settings) -> Iterator[LiveServer]:
    server = LiveServer(settings).start()
    yield server
    server.stop()


def reset_database(uri: str) -> None:
    """Empty the tables. TRUNCATE locks them all; a background poller of the server (chunk watch, sleeptime or
    cancel polls) reading two of them in one transaction can deadlock with it, and Postgres then cancels one side:
    when that is the TRUNCATE, try again."""

    async def run() -> None:
        engine = create_async_engine(async_url(uri))
        try:
            for attempt in range(5):
                try:
                    async with engine.begin() as conn:
                        for statement in RESET_SQL:
                            await conn.execute(text(statement))
                    return
                except DBAPIError as exc:
                    if "deadlock detected" not in str(exc) or attempt == 4:
                        raise
                    await asyncio.sleep(0.1)
        finally:
            await engine.dispose()

    asyncio.run(run())


@pytest.fixture
def server(live_server: LiveServer, pg_uri: str, mock_llm: "object") -> Iterator[LiveServer]:
    """The live server, with the database emptied and the mock LLM's unused replies dropped after the test (a reply
    one test scripted but did not use must not answer the next test's first call). The mock is also reset before
    the test: tests on a server of their own (restarts, fresh databases) leave their requests behind."""
    mock_llm.reset()  # type: ignore[attr-defined]
    yield live_server
    reset_database(pg_uri)
    mock_llm.reset()  # type: ignore[attr-defined]


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def client(server: LiveServer) -> "object":
    from letta_client import Letta

    return Letta(base_url=server.base_url, max_retries=0, timeout=60)


@pytest.fixture
async def session(pg_uri: str) -> AsyncIterator[AsyncSession]:
    """A session inside a transaction that is rolled back after the test (service tests)."""
    engine = create_async_engine(async_url(pg_uri))
    async with engine.connect() as conn:
        trans = await conn.begin()
        db = AsyncSession(bind=conn, expire_on_commit=False, join_transaction_mode="create_savepoint")
        try:
            yield db
        finally:
            await db.close()
            await trans.rollback()
    await engine.dispose()
