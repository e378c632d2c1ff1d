"""An embedded PostgreSQL 16 + pgvector (the ``pgserver`` wheels) under the data directory.

Used when no ``MEMLET_PG_URI`` / ``LETTA_PG_URI`` is configured. The server listens on a unix socket inside the
data directory only, so nothing is exposed on the network; a second start reuses the same data.

Every connection needs a password (scram-sha-256): a random one is made on first start and kept in
``<data dir>/postgres-password`` (mode 0600, next to ``pgdata``). pgserver initialises a cluster with trust auth;
``start`` sets the password while trust still lets it in, then rewrites ``pg_hba.conf`` and reloads, which also
upgrades a data dir made by an older memlet. The password travels only in the returned URI and in ``PGPASSWORD``
of psql's environment, never on a command line or in a log.
"""

import base64
import hashlib
import hmac
import os
import secrets
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url

DATABASE_NAME = "memlet"
PASSWORD_FILE = "postgres-password"
PG_HBA = """\
# Written by memlet: every connection, local or loopback, needs the password (scram-sha-256).
local   all   all                  scram-sha-256
host    all   all   127.0.0.1/32   scram-sha-256
host    all   all   ::1/128        scram-sha-256
"""
_SCRAM_ITERATIONS = 4096


@dataclass
class EmbeddedPostgres:
    pgdata: Path
    database: str = DATABASE_NAME
    _server: Any = None
    _admin: tuple[URL, str] | None = None

    def start(self) -> str:
        """Start (or attach to) the server, create the database and the vector extension; return its URI."""
        import pgserver  # imported lazily: it is only needed for the embedded default

        self.pgdata.mkdir(parents=True, exist_ok=True)
        password, created = _read_or_create_password(self.pgdata.parent / PASSWORD_FILE)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")  # platformdirs noise on headless hosts
            self._server = pgserver.get_server(str(self.pgdata), cleanup_mode="stop")  # type: ignore[attr-defined]
        admin = make_url(self._server.get_uri()).set(database="postgres")
        self._require_password(admin, password, created)
        exists = self._psql(admin, password, f"SELECT 1 FROM pg_database WHERE datname = '{self.database}';")
        if exists.strip() != "1":
            self._psql(admin, password, f'CREATE DATABASE "{self.database}";')
        self._admin = (admin, password)
        url = admin.set(database=self.database, password=password)
        return url.render_as_string(hide_password=False)

    def psql(self, sql: str) -> str:
        """Run `sql` as the superuser on the maintenance database (the server must be started)."""
        if self._admin is None:
            raise RuntimeError("the embedded Postgres is not started")
        admin, password = self._admin
        return self._psql(admin, password, sql)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def _require_password(self, admin: URL, password: str, created: bool) -> None:
        """Switch a trust-configured cluster to scram-sha-256 with `password` (a no-op once it is)."""
        hba = self.pgdata / "pg_hba.conf"
        if not _allows_trust(hba.read_text()):
            if created:
                raise RuntimeError(
                    f"the embedded Postgres in {self.pgdata} needs a password, but {self.pgdata.parent / PASSWORD_FILE}"
                    " was missing; restore that file (a new one was written and does not match)"
                )
            return
        # Still trust: set the role's password (as a SCRAM verifier: the clear text never reaches the server).
        self._psql(admin, None, f"ALTER ROLE {admin.username} PASSWORD '{scram_verifier(password)}';")
        hba.write_text(PG_HBA)  # in place, so the file keeps the owner the postgres process needs
        self._psql(admin, None, "SELECT pg_reload_conf();")

    def _psql(self, url: URL, password: str | None, sql: str) -> str:
        from pgserver._commands import POSTGRES_BIN_PATH

        env = {"PATH": os.defpath, "LANG": "C.UTF-8"}
        if password is not None:
            env["PGPASSWORD"] = password
        done = subprocess.run(
            [str(POSTGRES_BIN_PATH / "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", _dsn(url)],
            input=sql.encode(),
            capture_output=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", errors="replace").strip()
            raise RuntimeError(f"embedded Postgres: psql failed ({done.returncode}): {detail}")
        return done.stdout.decode("utf-8")


def _dsn(url: URL) -> str:
    """A libpq URI without the password (that goes in PGPASSWORD, not on psql's world-readable command line)."""
    return url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)


def _allows_trust(hba_text: str) -> bool:
    lines = (line.split("#", 1)[0].split() for line in hba_text.splitlines())
    return any("trust" in fields for fields in lines if fields)


def _read_or_create_password(path: Path) -> tuple[str, bool]:
    """The cluster password from `path` (0600), or a new random one written there; True when just created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        path.chmod(0o600)
        return path.read_text().strip(), False
    password = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as file:
        file.write(password + "\n")
    return password, True


def scram_verifier(password: str, *, salt: bytes | None = None, iterations: int = _SCRAM_ITERATIONS) -> str:
    """The SCRAM-SHA-256 verifier Postgres stores for `password` (RFC 5802 / 7677), so ALTER ROLE needs no clear text."""
    salt = salt or secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    stored_key = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"
