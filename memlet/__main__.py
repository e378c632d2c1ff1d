"""The ``memlet`` command: ``memlet server``, ``memlet db upgrade|downgrade``, ``memlet secrets reencrypt`` and
``memlet openapi``."""

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memlet import __version__
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from memlet.exposure import UnsafeExposureError, refuse_unsafe_exposure, warn_at_startup
from memlet.log import configure_logging


def _say(text: str) -> None:
    print(f"memlet: {text}", file=sys.stderr, flush=True)


@contextmanager
def database(settings: Settings) -> Iterator[str]:
    """Yield a Postgres URI: the configured one, or an embedded server started (and later stopped) here."""
    if settings.pg_uri:
        yield settings.pg_uri
        return
    pgdata = settings.resolved_data_dir / "pgdata"
    _say(f"starting embedded PostgreSQL + pgvector, data in {pgdata}")
    started = time.perf_counter()
    embedded = EmbeddedPostgres(pgdata)
    try:
        uri = embedded.start()
        _say(f"embedded PostgreSQL ready in {time.perf_counter() - started:.1f}s")
        yield uri
    finally:
        embedded.stop()
        _say("embedded PostgreSQL stopped")


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment, with the command line's values on top; a bad configuration exits with 2."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        # Only the messages: pydantic's full text repeats the input values, passwords included.
        for error in exc.errors():
            _say(f"invalid configuration: {error['msg'].removeprefix('Value error, ')}")
        raise SystemExit(2) from None


def _migrate(uri: str) -> None:
    from memlet import migrations  # alembic (~7 MB) stays out of a server started without migrations

    started = time.perf_counter()
    _say("applying database migrations")
    asyncio.run(migrations.upgrade(uri))
    _say(f"database schema up to date ({time.perf_counter() - started:.1f}s)")


def _migrate_in_child(uri: str) -> int:
    """Run the migrations in a forked child that exits afterwards: Alembic, the migration scripts and their metadata
    (~8 MB) then never stay in the server's memory. Where there is no fork, they run in this process."""
    if not hasattr(os, "fork"):
        _migrate(uri)
        return 0
    # The server needs SQLAlchemy and asyncpg too: import them once here, so the child does not repeat the work.
    import memlet.db.engine  # noqa: F401

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()  # no threads yet: the embedded Postgres is a separate process
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 1
        try:
            _migrate(uri)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # never run the parent's exit handlers (they would stop the embedded Postgres)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _metrics_dir(settings: Settings) -> Path:
    """Where the workers' metrics are summed: the configured directory emptied of a previous run's files, or a
    fresh temporary one."""
    if settings.prometheus_multiproc_dir is None:
        return Path(tempfile.mkdtemp(prefix="memlet-metrics-"))
    directory = settings.prometheus_multiproc_dir
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*_*.db"):  # prometheus_client's files: counter_<pid>.db, histogram_<pid>.db ...
        stale.unlink()
    return directory


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    settings = load_settings(host=args.host, port=args.port)
    host, port = settings.host, settings.port
    configure_logging(settings.log_level)
    try:
        refuse_unsafe_exposure(settings)  # before the database starts: a refusal is immediate
    except UnsafeExposureError as exc:
        _say(str(exc))
        return 2
    warn_at_startup(settings, os.geteuid() if hasattr(os, "geteuid") else None)
    with database(settings) as uri:
        if settings.migrate_on_start and (code := _migrate_in_child(uri)):
            _say(f"database migrations failed (exit code {code})")
            return code
        settings = settings.model_copy(update={"pg_uri": uri})
        _say(f"serving the Letta API on http://{host}:{port}  (docs: http://{host}:{port}/docs)")
        # Open requests get the shutdown grace too; the lifespan then stops whatever runs are left (runs.worker).
        grace = max(1, round(settings.shutdown_grace_s))
        # uvicorn's "auto" loop and parser are uvloop and httptools (uvicorn[standard]). Its access log is never
        # shown at the "warning" level, so it is off: each request would still format the line to drop it.
        if args.workers > 1:
            # Workers re-read settings from the environment: hand them the database URI and the real bind address.
            os.environ.update(MEMLET_PG_URI=uri, MEMLET_HOST=host, MEMLET_PORT=str(port))
            metrics_dir = _metrics_dir(settings)
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
            try:
                uvicorn.run(
                    "memlet.app:app_from_env",
                    factory=True,
                    host=host,
                    port=port,
                    workers=args.workers,
                    log_level="warning",
                    access_log=False,
                    ws="none",  # no WebSocket routes: the websockets library (~1 MB) stays unloaded
                    timeout_graceful_shutdown=grace,
                )
            finally:
                if settings.prometheus_multiproc_dir is None:
                    shutil.rmtree(metrics_dir, ignore_errors=True)
        else:
            from memlet.app import create_app

            uvicorn.run(
                create_app(settings),
                host=host,
                port=port,
                log_level="warning",
                access_log=False,
                ws="none",
                timeout_graceful_shutdown=grace,
            )
    return 0


def db(args: argparse.Namespace) -> int:
    settings = load_settings()
    with database(settings) as uri:
        if args.action == "upgrade":
            _migrate(uri)
        else:
            from memlet import migrations

            asyncio.run(migrations.downgrade(uri, args.revision))
            _say(f"database downgraded to {args.revision}")
    return 0


def secrets(args: argparse.Namespace) -> int:
    from memlet.crypto import SecretDecryptError, keyring_for
    from memlet.db.engine import create_engine, create_sessionmaker
    from memlet.reencrypt import reencrypt_all

    settings = Settings()

    async def run(uri: str) -> int:
        engine = create_engine(uri, settings)
        try:
            async with create_sessionmaker(engine)() as session, session.begin():
                done = await reencrypt_all(session, keyring_for(settings))
        except (ValueError, SecretDecryptError) as exc:
            _say(f"nothing changed: {exc}")
            return 1
        finally:
            await engine.dispose()
        _say(f"re-encrypted the secrets of {done.agents} agents and the keys of {done.providers} providers")
        return 0

    with database(settings) as uri:
        return asyncio.run(run(uri))


def openapi(_args: argparse.Namespace) -> int:
    """Print the server's OpenAPI schema as JSON (what `/openapi.json` serves: the server runs this in a child)."""
    from memlet.api.openapi_doc import encode
    from memlet.app import create_app

    # No route depends on the settings; these only satisfy create_app (nothing is connected to).
    app = create_app(Settings(_env_file=None, pg_uri="postgresql://memlet@127.0.0.1:1/memlet"))  # type: ignore[call-arg]
    sys.stdout.buffer.write(encode(app.openapi()))
    sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memlet", description="A Letta-compatible agent server.")
    parser.add_argument("--version", action="version", version=f"memlet {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("server", aliases=["serve"], help="run the API server")
    server.add_argument("--host", default=None, help="bind address (default 127.0.0.1, or MEMLET_HOST)")
    server.add_argument("--port", type=int, default=None, help="port (default 8283, or MEMLET_PORT)")
    server.add_argument("--workers", type=int, default=1, help="worker processes (needs nothing else shared)")
    server.set_defaults(func=serve)
    database_cmd = sub.add_parser("db", help="database schema")
    database_cmd.add_argument("action", choices=["upgrade", "downgrade"])
    database_cmd.add_argument("revision", nargs="?", default="base", help="downgrade target (default base)")
    database_cmd.set_defaults(func=db)
    secrets_cmd = sub.add_parser("secrets", help="stored credentials")
    secrets_cmd.add_argument("action", choices=["reencrypt"], help="encrypt every row with the first key")
    secrets_cmd.set_defaults(func=secrets)
    sub.add_parser("openapi", help="print the API's OpenAPI schema (JSON)").set_defaults(func=openapi)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
