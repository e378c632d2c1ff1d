"""An embedded PostgreSQL 16 + pgvector (the ``pgserver`` wheels) under the data directory.

Used when no ``MEMLET_PG_URI`` / ``LETTA_PG_URI`` is configured. The server listens on a unix socket inside the
data directory only, so nothing is exposed on the network; a second start reuses the same data.
"""

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

DATABASE_NAME = "memlet"


@dataclass
class EmbeddedPostgres:
    pgdata: Path
    database: str = DATABASE_NAME
    _server: Any = None

    def start(self) -> str:
        """Start (or attach to) the server, create the database and the vector extension; return its URI."""
        import pgserver  # imported lazily: it is only needed for the embedded default

        self.pgdata.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")  # platformdirs noise on headless hosts
            self._server = pgserver.get_server(str(self.pgdata), cleanup_mode="stop")
        exists = self._server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{self.database}';")
        if "(1 row)" not in exists:
            self._server.psql(f'CREATE DATABASE "{self.database}";')
        url = make_url(self._server.get_uri()).set(database=self.database)
        return url.render_as_string(hide_password=False)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
