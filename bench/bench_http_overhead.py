"""What a request costs the server outside its handler's own work: server CPU µs per request for a trivial route and
the hot state routes, against a real ``memlet server`` process (uvicorn, every middleware, FastAPI's request work).

    .venv/bin/python bench/bench_http_overhead.py [--n 2000] [--rounds 3] [--in-process-only]

Each row sends `--n` sequential requests over one keep-alive connection and divides the server process's CPU time
(user + system, from /proc: far steadier than wall time on a shared machine) by `--n`; the best of `--rounds`
rounds is printed, since other load only ever adds time. ``GET /v1/health/`` has no dependency and no SQL, so its
row is the floor every request pays: uvicorn's parsing, the middleware chain, routing, FastAPI's handler plumbing
and the JSON response. The Postgres column shows the database's share of the others.

First, in this process and with no database, it times a whole ``POST /v1/agents/{id}/messages`` through the app
(the edge middleware, routing, FastAPI's dependencies, body validation and response encoding) with the turn itself
(`SendService.send`) stubbed to return a recorded LettaResponse: the CPU a send pays outside its turn, steadier
than anything measured across processes.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import Bench, bench_server

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "letta" / "samples" / "letta_response.json"
SEND_BODY = json.dumps({"messages": [{"role": "user", "content": "hello 1"}]}).encode()


def send_outside_turn_us(n: int = 2000, rounds: int = 5) -> float:
    """CPU µs of one blocking send through the whole app, less its turn (stubbed), best of `rounds`."""
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from memlet.app import create_app
    from memlet.config import Settings
    from memlet.messages.schemas import LettaResponse
    from memlet.turns.sending import SendService

    recorded = json.loads(SAMPLE.read_text())
    app = create_app(Settings(_env_file=None, pg_uri="postgresql://unused/unused"))  # type: ignore[call-arg]
    app.state.sessionmaker = async_sessionmaker(create_async_engine("postgresql+asyncpg://u:p@127.0.0.1:1/unused"))
    app.state.run_worker = SimpleNamespace(turns=None, worker_id="bench")
    app.state.llm_for = None
    path = "/v1/agents/agent-3f6c2a57-8d0e-4b8a-9d5e-1a2b3c4d5e6f/messages"
    headers = [
        (b"host", b"127.0.0.1:8283"),
        (b"accept", b"*/*"),
        (b"accept-encoding", b"gzip, deflate"),
        (b"connection", b"keep-alive"),
        (b"user-agent", b"python-httpx/0.28.1"),
        (b"content-length", str(len(SEND_BODY)).encode()),
        (b"content-type", b"application/json"),
    ]
    answered: list[int] = []

    async def turn(*_: Any) -> LettaResponse:
        return LettaResponse.model_validate(recorded)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": SEND_BODY, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.append(message["status"])

    async def timed(call: Any, count: int) -> float:
        started = time.process_time()
        for _ in range(count):
            await call()
        return (time.process_time() - started) / count * 1e6

    async def one() -> None:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "server": ("127.0.0.1", 8283),
            "client": ("127.0.0.1", 50000),
            "headers": list(headers),
            "state": {},
        }
        await app(scope, receive, send)

    async def best() -> float:
        with mock.patch.object(SendService, "send", turn):
            await timed(one, 100)
            if set(answered) != {200}:
                raise RuntimeError(f"the stubbed send answered {set(answered)}")
            whole = min([await timed(one, n) for _ in range(rounds)])
            stub = min([await timed(turn, n) for _ in range(rounds)])
        return whole - stub

    return asyncio.run(best())


def per_request_us(bench: Bench, http: httpx.Client, method: str, path: str, n: int, body: object = None) -> tuple:
    server_before, pg_before = bench.cpu_seconds()
    for _ in range(n):
        response = http.request(method, path, json=body)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:200]}")
    server_after, pg_after = bench.cpu_seconds()
    return (server_after - server_before) / n * 1e6, (pg_after - pg_before) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-process-only", action="store_true")
    args = parser.parse_args()
    print(f"POST /v1/agents/{{agent_id}}/messages outside its turn (in process): {send_outside_turn_us():.0f} µs CPU")
    if args.in_process_only:
        return
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = ""
        for i in range(50):
            agent_id = http.post("/v1/agents/", json={**AGENT, "name": f"overhead-{i}"}).json()["id"]
        rows = [
            ("GET", "/v1/health/", None, args.n),
            ("GET", f"/v1/agents/{agent_id}", None, args.n // 2),
            ("GET", "/v1/agents/?limit=50", None, args.n // 10),
            ("GET", f"/v1/agents/{agent_id}/messages?limit=10", None, args.n // 2),
        ]
        for method, path, body, _n in rows:  # warm-up: first-use imports and caches
            per_request_us(bench, http, method, path, 50, body)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for method, path, body, n in rows:
                server, pg = per_request_us(bench, http, method, path, n, body)
                key = f"{method} {path}"
                if key not in best or server < best[key][0]:
                    best[key] = (server, pg)
            time.sleep(0.2)
        print(f"{'request':60} {'server µs':>10} {'Postgres µs':>12}")
        for key, (server, pg) in best.items():
            print(f"{key.replace(agent_id, '{agent_id}'):60} {server:10.0f} {pg:12.0f}")


if __name__ == "__main__":
    main()
