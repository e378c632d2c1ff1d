"""What a request costs the server outside its handler's own work: server CPU µs per request for a trivial route and
the hot state routes, against a real ``memlet server`` process (uvicorn, every middleware, FastAPI's request work).

    .venv/bin/python bench/bench_http_overhead.py [--n 2000] [--rounds 3]

Each row sends `--n` sequential requests over one keep-alive connection and divides the server process's CPU time
(user + system, from /proc: far steadier than wall time on a shared machine) by `--n`; the best of `--rounds`
rounds is printed, since other load only ever adds time. ``GET /v1/health/`` has no dependency and no SQL, so its
row is the floor every request pays: uvicorn's parsing, the middleware chain, routing, FastAPI's handler plumbing
and the JSON response. The Postgres column shows the database's share of the others.
"""

import argparse
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import Bench, bench_server


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
    args = parser.parse_args()
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
