"""`/openapi.json` comes from a child process, once; a child that fails or prints garbage falls back to building
the schema in the server (`memlet.api.openapi_doc`)."""

import asyncio
import sys
from pathlib import Path

import pytest

from memlet.api.openapi_doc import OpenAPIDocument

HERE = {"built": "here"}


def here() -> dict[str, str]:
    return HERE


async def test_concurrent_first_requests_share_one_child(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code = f"open({str(runs)!r}, 'a').write('x'); print('{{\"built\": \"child\"}}')"
    doc = OpenAPIDocument(here, [sys.executable, "-c", code])
    answers = await asyncio.gather(*(doc.json() for _ in range(5)))
    assert set(answers) == {b'{"built": "child"}\n'}
    assert await doc.json() == answers[0]
    assert runs.read_text() == "x"


@pytest.mark.parametrize("code", ["raise SystemExit(3)", "print('{\"truncated\":')"])
async def test_a_failed_child_falls_back_to_building_here(code: str) -> None:
    doc = OpenAPIDocument(here, [sys.executable, "-c", code])
    assert await doc.json() == b'{"built":"here"}'


async def test_the_memlet_command_prints_the_schema() -> None:
    body = await OpenAPIDocument(lambda: pytest.fail("built here"), None).json()  # type: ignore[arg-type, return-value]
    assert body.startswith(b'{"openapi":"3.1.0"')
