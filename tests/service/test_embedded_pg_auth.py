"""The embedded Postgres asks every client for its password (scram-sha-256): finding 2 of issue 7, where a tool
connected to it as superuser over the unix socket with trust auth."""

import shutil
import stat
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from memlet.db.embedded import PASSWORD_FILE, EmbeddedPostgres


async def connect_error(uri: str, password: str | None) -> str:
    """The exception class name of connecting to `uri`'s socket with `password` (None: none), or "ok"."""
    url = make_url(uri)
    try:
        conn = await asyncpg.connect(
            host=str(url.query["host"]), user=url.username, database=url.database, password=password
        )
    except Exception as exc:
        return type(exc).__name__
    await conn.close()
    return "ok"


def active_hba_methods(pgdata: Path) -> set[str]:
    lines = (line.split("#", 1)[0].split() for line in (pgdata / "pg_hba.conf").read_text().splitlines())
    return {fields[-1] for fields in lines if fields}


class TestTestServer:
    async def test_password_required(self, embedded_pg: EmbeddedPostgres, pg_uri: str) -> None:
        assert await connect_error(pg_uri, None) == "InvalidPasswordError"
        assert await connect_error(pg_uri, "wrong") == "InvalidPasswordError"
        assert await connect_error(pg_uri, make_url(pg_uri).password) == "ok"
        assert active_hba_methods(embedded_pg.pgdata) == {"scram-sha-256"}

    def test_password_file_private(self, embedded_pg: EmbeddedPostgres, pg_uri: str) -> None:
        path = embedded_pg.pgdata.parent / PASSWORD_FILE
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text().strip() == make_url(pg_uri).password


@pytest.fixture
def trust_cluster() -> Iterator[Path]:
    """A data dir as an older memlet left it: pgserver's trust authentication, stopped."""
    import pgserver

    root = Path(tempfile.mkdtemp(prefix="memlet-trust-pg-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pgserver.get_server(str(root / "pgdata"), cleanup_mode="stop").cleanup()
    yield root / "pgdata"
    shutil.rmtree(root, ignore_errors=True)


class TestUpgrade:
    async def test_trust_data_dir_switched_to_password(self, trust_cluster: Path) -> None:
        assert "trust" in active_hba_methods(trust_cluster)
        embedded = EmbeddedPostgres(trust_cluster, database="upgraded")
        try:
            uri = embedded.start()
            assert active_hba_methods(trust_cluster) == {"scram-sha-256"}
            assert await connect_error(uri, None) == "InvalidPasswordError"
            assert await connect_error(uri, make_url(uri).password) == "ok"
            assert embedded.start() == uri  # the next start reads the same password back
        finally:
            embedded.stop()
