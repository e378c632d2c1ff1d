"""Run Alembic migrations programmatically (server start-up, ``memlet db upgrade``, tests)."""

from pathlib import Path

from alembic.config import Config
from sqlalchemy import pool, text
from sqlalchemy.ext.asyncio import create_async_engine

from alembic import command
from memlet.db.engine import async_url

ROOT = Path(__file__).resolve().parent.parent


def alembic_config(url: str) -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
    cfg.attributes["url"] = url
    return cfg


async def _run(url: str, fn_name: str, target: str) -> None:
    engine = create_async_engine(async_url(url), poolclass=pool.NullPool)
    async with engine.begin() as conn:
        # Serialize concurrent migrators (several workers or hosts starting at once).
        await conn.execute(text("SELECT pg_advisory_xact_lock(7261736)"))

        def run(sync_conn: object) -> None:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = sync_conn
            getattr(command, fn_name)(cfg, target)

        await conn.run_sync(run)
    await engine.dispose()


async def upgrade(url: str, target: str = "head") -> None:
    await _run(url, "upgrade", target)


async def downgrade(url: str, target: str = "base") -> None:
    await _run(url, "downgrade", target)
