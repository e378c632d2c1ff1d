"""The server freezes its start-up objects, so a full garbage collection no longer scans them inside a request, and
raises the young generation's threshold, so a send no longer runs a young collection of its own."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUN_LIFESPAN = """
import asyncio, gc, json, time
from memlet.app import create_app
from memlet.config import Settings

settings = Settings(
    _env_file=None, pg_uri={pg_uri!r}, openai_api_key="sk-mock", gc_freeze={freeze!r}, gc_young_threshold=12345
)
app = create_app(settings)

async def main():
    async with app.router.lifespan_context(app):
        started = time.perf_counter()
        gc.collect()
        full_ms = (time.perf_counter() - started) * 1000
        print(json.dumps({{"frozen": gc.get_freeze_count(), "full_ms": full_ms, "young": gc.get_threshold()[0]}}))

asyncio.run(main())
"""


def _started(pg_uri: str, freeze: bool) -> dict[str, float]:
    code = RUN_LIFESPAN.format(pg_uri=pg_uri, freeze=freeze)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_startup_objects_are_frozen_and_full_collections_get_short(pg_uri: str) -> None:
    frozen, plain = _started(pg_uri, freeze=True), _started(pg_uri, freeze=False)
    print(f"\nfull collection after start-up: {plain['full_ms']:.1f} ms, frozen: {frozen['full_ms']:.1f} ms")
    assert plain["frozen"] == 0
    assert frozen["frozen"] > 100_000  # modules, classes, schemas, mappers, routes
    assert frozen["full_ms"] < plain["full_ms"] / 3
    assert (frozen["young"], plain["young"]) == (12345, 700)  # the setting, and CPython's default when not frozen
