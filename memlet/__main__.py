"""The ``memlet`` command: ``memlet server`` and ``memlet db upgrade|downgrade``."""

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from memlet import __version__, migrations
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres


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


def _migrate(uri: str) -> None:
    started = time.perf_counter()
    _say("applying database migrations")
    asyncio.run(migrations.upgrade(uri))
    _say(f"database schema up to date ({time.perf_counter() - started:.1f}s)")


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    settings = Settings()
    host = args.host or settings.host
    port = args.port or settings.port
    with database(settings) as uri:
        if settings.migrate_on_start:
            _migrate(uri)
        settings = settings.model_copy(update={"pg_uri": uri})
        _say(f"serving the Letta API on http://{host}:{port}  (docs: http://{host}:{port}/docs)")
        if args.workers > 1:
            # Workers re-read settings from the environment, so hand them the resolved database URI.
            os.environ["MEMLET_PG_URI"] = uri
            uvicorn.run(
                "memlet.app:app_from_env", factory=True, host=host, port=port, workers=args.workers, log_level="warning"
            )
        else:
            from memlet.app import create_app

            uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
    return 0


def db(args: argparse.Namespace) -> int:
    settings = Settings()
    with database(settings) as uri:
        if args.action == "upgrade":
            _migrate(uri)
        else:
            asyncio.run(migrations.downgrade(uri, args.revision))
            _say(f"database downgraded to {args.revision}")
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
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
