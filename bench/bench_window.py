"""CPU per one-step send as an agent's in-context window grows, with and without the window cache
(`memlet/loop/window_cache.py`): two servers side by side, each on its own embedded Postgres, one agent each,
their sends interleaved window by window so both see the same machine.

    .venv/bin/python bench/bench_window.py [--window 50] [--windows 10]

Each line is `--window` sends to each server's agent: the window length after them, then server and Postgres CPU per
send for the cache off (`MEMLET_CONTEXT_CACHE_MB=0`) and on (the default). A send appends two messages, so 10 windows
of 50 end at ~1,000 in-context messages. The slope (per 100 messages) is printed at the end.
"""

import argparse
import os
import sys
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT, send
from bench.harness import Bench, bench_server


def _server(stack: ExitStack, cache_mb: str) -> Bench:
    os.environ["MEMLET_CONTEXT_CACHE_MB"] = cache_mb  # read by the server process at its start
    try:
        return stack.enter_context(bench_server())
    finally:
        del os.environ["MEMLET_CONTEXT_CACHE_MB"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--windows", type=int, default=10)
    args = parser.parse_args()
    with ExitStack() as stack:
        sides = {"off": _server(stack, "0"), "on": _server(stack, "64")}
        clients = {k: stack.enter_context(httpx.Client(base_url=b.base_url, timeout=60)) for k, b in sides.items()}
        agents = {k: c.post("/v1/agents/", json={**AGENT, "name": "window"}).json()["id"] for k, c in clients.items()}
        totals: dict[str, list[tuple[int, float]]] = {k: [] for k in sides}
        print("in-context   cache off: server + Postgres ms/send   cache on: server + Postgres ms/send")
        for w in range(args.windows):
            line = []
            for key, bench in sides.items():
                server_before, pg_before = bench.cpu_seconds()
                for i in range(args.window):
                    send(clients[key], agents[key], f"hello {w} {i}")
                server_after, pg_after = bench.cpu_seconds()
                server = (server_after - server_before) * 1000 / args.window
                pg = (pg_after - pg_before) * 1000 / args.window
                size = len(clients[key].get(f"/v1/agents/{agents[key]}").json()["message_ids"])
                totals[key].append((size, server + pg))
                line.append(f"{server:6.2f} + {pg:5.2f} = {server + pg:6.2f}")
            print(f"{size:10d}   {line[0]}            {line[1]}", flush=True)
        for key, points in totals.items():
            (x0, y0), (x1, y1) = points[0], points[-1]
            print(f"cache {key}: {(y1 - y0) / (x1 - x0) * 100:.2f} ms more per send per 100 in-context messages")


if __name__ == "__main__":
    main()
