"""`/openapi.json` (which `/docs` and `/redoc` load) with the schema built in a child process.

Building the schema in the server costs ~1 s of CPU and ~20 MB of resident memory it never gives back (~8 MB even
once the schema itself is dropped: every route's validators and pydantic's JSON-schema work stay). So the first
request runs `python -m memlet openapi` (the same routes, built from default settings: no route depends on them)
and the server keeps only the JSON it prints (~0.56 MB), served as is from then on. Concurrent first requests share
that one child. If the child fails, the schema is built here after all, as FastAPI would.
"""

import asyncio
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memlet.log import get_logger

log = get_logger("api.openapi")

CHILD_TIMEOUT_S = 120.0
# The child needs none of the server's configuration (and so none of its secrets).
_CONFIG_PREFIXES = ("MEMLET_", "LETTA_", "OPENAI_", "ANTHROPIC_", "OLLAMA_")


def encode(schema: dict[str, Any]) -> bytes:
    """The schema as FastAPI's JSONResponse encodes it."""
    return json.dumps(schema, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode()


async def _from_child(command: list[str]) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    child = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(), CHILD_TIMEOUT_S)
    except TimeoutError:
        child.kill()
        await child.wait()
        raise RuntimeError("the schema child did not finish in time") from None
    if child.returncode != 0:
        raise RuntimeError(f"the schema child exited with {child.returncode}: {err.decode(errors='replace')[-500:]}")
    json.loads(out)  # a truncated or garbled answer is not served
    return out


class OpenAPIDocument:
    """The schema's JSON, built once: by `command` in a child process, else by `build_here`."""

    def __init__(self, build_here: Callable[[], dict[str, Any]], command: list[str] | None = None) -> None:
        self.build_here = build_here
        self.command = command or [sys.executable, "-m", "memlet", "openapi"]
        self._json: bytes | None = None
        self._lock = asyncio.Lock()

    async def json(self) -> bytes:
        if self._json is None:
            async with self._lock:
                if self._json is None:
                    self._json = await self._build()
        return self._json

    async def _build(self) -> bytes:
        try:
            return await _from_child(self.command)
        except (OSError, RuntimeError, ValueError) as exc:
            log.warning("building the OpenAPI schema here: the child process failed (%s)", exc)
            return encode(self.build_here())


def install(app: FastAPI) -> None:
    """Serve the app's `openapi_url` from an `OpenAPIDocument` instead of FastAPI's in-process route."""
    url = app.openapi_url
    assert url is not None
    doc = OpenAPIDocument(app.openapi)

    async def openapi(request: Request) -> Response:
        body = await doc.json()
        root_path = request.scope.get("root_path", "").rstrip("/")
        if root_path and app.root_path_in_servers:  # as FastAPI: a mounted app lists its prefix as a server
            schema = json.loads(body)
            if root_path not in {s.get("url") for s in schema.get("servers", [])}:
                schema["servers"] = [{"url": root_path}, *schema.get("servers", [])]
                body = encode(schema)
        return Response(body, media_type="application/json")

    routes = app.router.routes
    position = next(i for i, r in enumerate(routes) if isinstance(r, Route) and r.path == url)
    routes[position] = Route(url, openapi, methods=["GET", "HEAD"], include_in_schema=False)
