"""Shared bench plumbing: an embedded Postgres, the project's mock LLM and an in-process memlet that counts SQL."""

import asyncio
import statistics
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import event

from memlet import migrations
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM


@dataclass
class SqlCounter:
    """Counts statements sent to Postgres (one round trip each) while a request runs."""

    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, *_: object) -> None:
        with self.lock:
            self.count += 1


@dataclass
class Bench:
    server: LiveServer
    mock: MockLLM
    sql: SqlCounter


@contextmanager
def bench_server() -> Iterator[Bench]:
    with tempfile.TemporaryDirectory() as tmp:
        pg = EmbeddedPostgres(Path(tmp) / "pgdata", database="memlet_bench")
        uri = pg.start()
        mock = MockLLM.start()
        try:
            asyncio.run(migrations.upgrade(uri))
            settings = Settings(
                _env_file=None,
                pg_uri=uri,
                openai_api_key="sk-mock",  # type: ignore[call-arg]
                openai_base_url=mock.base_url,
                log_level="WARNING",
            )
            server = LiveServer(settings).start()
            counter = SqlCounter()
            engine = server.server.config.app.state.engine  # type: ignore[attr-defined]
            event.listen(engine.sync_engine, "before_cursor_execute", counter)
            try:
                yield Bench(server, mock, counter)
            finally:
                server.stop()
        finally:
            mock.stop()
            pg.stop()


def summary(name: str, seconds: list[float], statements: list[int] | None = None) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
    line = f"{name:<42} n={len(ms):<5} p50={q[49]:8.2f} ms  p99={q[98]:8.2f} ms"
    if statements:
        line += f"  sql/request={statistics.median(statements):.0f} (max {max(statements)})"
    return line
