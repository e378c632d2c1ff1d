"""Route dispatch cost: µs from the app's router to the matched endpoint's handler, for hot and cold paths
(process CPU time, the best of 5 rounds).

    .venv/bin/python bench/bench_routing.py [--n 20000]

Builds the app (no database: nothing is served) and drives its router with the endpoints' handlers replaced by a
no-op, so what is timed is routing alone: matching, nested-router bookkeeping, 404 and 405 answers. Issue #13 noted
~0.4 ms of routing per send with FastAPI's nested included routers; the table is now flat (`routes.add_v1_routes`)
and looked up by path shape (`api/route_index.py`). A miss (404, 405) still walks the whole table, as before.
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from memlet.app import create_app
from memlet.config import Settings

AGENT = "agent-3f6c2a57-8d0e-4b8a-9d5e-1a2b3c4d5e6f"
RUN = "run-3f6c2a57-8d0e-4b8a-9d5e-1a2b3c4d5e6f"
ROUNDS = 5
PATHS = [
    ("hot", "POST", f"/v1/agents/{AGENT}/messages"),
    ("hot", "POST", f"/v1/agents/{AGENT}/messages/stream"),
    ("hot", "GET", f"/v1/agents/{AGENT}/messages"),
    ("hot", "GET", "/v1/agents/"),
    ("hot", "GET", f"/v1/agents/{AGENT}"),
    ("hot", "GET", f"/v1/runs/{RUN}"),
    ("hot", "GET", "/v1/runs/"),
    ("hot", "POST", f"/v1/runs/{RUN}/stream"),
    ("cold", "GET", "/v1/health/"),
    ("cold", "GET", "/v1/tags/"),
    ("cold", "GET", "/v1/_internal_runs/"),
    ("cold", "GET", "/v1/telemetry/step-1"),
    ("cold", "GET", "/v1/_internal_templates/deployment/dep-1"),
    ("cold", "POST", "/v1/tools/mcp/servers/srv/tools/t/execute"),
    ("miss", "GET", "/v1/nothing/here"),
    ("miss", "GET", "/v1/agents"),  # 404 first; the edge (api/edge.py) then retries /v1/agents/
    ("miss", "PUT", f"/v1/runs/{RUN}/stream"),  # 405
]


def _scope(app: Any, method: str, path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"localhost")],
        "app": app,
    }


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def dispatch_us(app: Any, method: str, path: str, n: int) -> tuple[float, str]:
    """Mean µs of one dispatch, and what answered (the route's path template or the status)."""
    answered: list[str] = []

    async def handle(route: APIRoute, scope: Any, receive: Any, send: Any) -> None:
        answered.append(route.path_format if scope["method"] in route.methods else "405")

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            answered.append(str(message["status"]))

    def once() -> None:
        coro = app.router(_scope(app, method, path), _receive, send)
        try:
            coro.send(None)
        except StopIteration:
            return
        except HTTPException as exc:  # the router's own 404 (the app's exception handler answers it)
            answered.append(str(exc.status_code))
            return
        raise RuntimeError("the router awaited something")  # pragma: no cover

    with mock.patch.object(APIRoute, "handle", handle):
        once()
        what = answered[-1]
        best = float("inf")
        for _ in range(ROUNDS):  # the best round: other load on a shared machine only ever adds time
            started = time.process_time()
            for _ in range(n // ROUNDS):
                once()
            best = min(best, (time.process_time() - started) / (n // ROUNDS) * 1e6)
        return best, what


def stack_us(app: Any, method: str, path: str, n: int) -> float:
    """Mean µs of one request through the whole app (every middleware, the router, a handler answering 200 "{}")."""

    async def handle(route: APIRoute, scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def send(message: Any) -> None:
        return None

    async def many(count: int) -> float:
        started = time.process_time()
        for _ in range(count):
            await app(_scope(app, method, path), _receive, send)
        return (time.process_time() - started) / count * 1e6

    with mock.patch.object(APIRoute, "handle", handle):
        asyncio.run(many(10))  # builds the middleware stack
        return min(asyncio.run(many(n // ROUNDS)) for _ in range(ROUNDS))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()
    app = create_app(Settings(pg_uri="postgresql://unused/unused"))
    print(f"{'':5} {'method':6} {'path':70} {'µs':>7}  answered by")
    for kind, method, path in PATHS:
        us, what = dispatch_us(app, method, path, args.n)
        print(f"{kind:5} {method:6} {path:70} {us:7.1f}  {what}", flush=True)
    method, path = PATHS[0][1:]
    print(
        f"whole app (middleware + router + a no-op handler), {method} {path}: {stack_us(app, method, path, args.n):.1f} µs"
    )


if __name__ == "__main__":
    main()
