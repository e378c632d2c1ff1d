"""List agents: ``GET /v1/agents/?limit=50`` of 1,000 agents with blocks and tools, against a memlet server process.

    .venv/bin/python bench/bench_list_agents.py [--total 1000] [--lists 100] [--runs 3]

Prints wall-clock p50/p99 and the CPU per request of the server plus its Postgres (both from /proc), next to
Letta 0.16.8 on the same kind of machine (../shared/letta/baseline.md, phase f): p50 383.5 ms, p99 962.7 ms,
338 ms server CPU per request. The machine load is printed too: latency on a shared machine is noisy, CPU less so.
"""

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server, summary
from bench.procstat import cpu_seconds, postmaster_pid

LETTA_P50_MS, LETTA_CPU_MS = 383.5, 338
BODY = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def seed(base_url: str, total: int) -> None:
    def create(i: int) -> None:
        httpx.post(f"{base_url}/v1/agents/", json={**BODY, "name": f"fill-{i}"}, timeout=60).raise_for_status()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(total)))


def measure(http: httpx.Client, lists: int, pids: list[int]) -> tuple[list[float], list[float]]:
    for _ in range(5):
        http.get("/v1/agents/", params={"limit": 50}).raise_for_status()
    times = []
    cpu_before = [cpu_seconds(p) for p in pids]
    for _ in range(lists):
        started = time.perf_counter()
        response = http.get("/v1/agents/", params={"limit": 50})
        times.append(time.perf_counter() - started)
        assert len(response.json()) == 50
    return times, [(cpu_seconds(p) - before) / lists * 1000 for p, before in zip(pids, cpu_before, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        seed(bench.base_url, args.total)
        pids = [bench.server_pid, postmaster_pid(bench.pg_uri) or bench.server_pid]
        for run in range(1, args.runs + 1):
            times, (server_ms, pg_ms) = measure(http, args.lists, pids)
            cpu_ms = server_ms + pg_ms
            p50 = sorted(times)[len(times) // 2] * 1000
            print(
                summary(f"run {run}: list agents limit=50 of {args.total}", times),
                f" cpu={cpu_ms:6.2f} ms/op (server {server_ms:.1f} + pg {pg_ms:.1f})  Letta p50 {LETTA_P50_MS} ms, cpu {LETTA_CPU_MS} ms:"
                f" {LETTA_P50_MS / p50:5.1f}x wall, {LETTA_CPU_MS / cpu_ms:5.1f}x cpu  load {os.getloadavg()[0]:.2f}",
            )


if __name__ == "__main__":
    main()
