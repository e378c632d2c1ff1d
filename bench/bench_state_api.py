"""State-API latency: create agent (2 blocks) and list agents (limit 50 of 1,000), against a memlet server process,
then the SQL statements per request (counted in-process).

    .venv/bin/python bench/bench_state_api.py [--creates 200] [--total 1000] [--lists 100]

Letta 0.16.8 on the same kind of machine (../shared/letta/baseline.md): create p50 202.8 ms / p99 270.3 ms,
list-agents p50 383.5 ms / p99 962.7 ms.
"""

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server, rss_mb, summary
from bench.trace_sql import print_counts

BODY = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=100)
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        times = []
        for i in range(args.creates):
            started = time.perf_counter()
            response = http.post("/v1/agents/", json={**BODY, "name": f"bench-{i}"})
            times.append(time.perf_counter() - started)
            response.raise_for_status()
        print(summary("create agent (2 blocks), sequential", times))

        def create(i: int) -> None:
            httpx.post(f"{bench.base_url}/v1/agents/", json={**BODY, "name": f"fill-{i}"}, timeout=60)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(args.creates, args.total)))
        times = []
        for _ in range(args.lists):
            started = time.perf_counter()
            response = http.get("/v1/agents/", params={"limit": 50})
            times.append(time.perf_counter() - started)
            assert len(response.json()) == 50
        print(summary(f"list agents limit=50 of {args.total} (all relations)", times))
        times = []
        for _ in range(args.lists):
            started = time.perf_counter()
            http.get("/v1/agents/", params={"limit": 50, "include": ["agent.blocks", "agent.tools", "agent.tags"]})
            times.append(time.perf_counter() - started)
        print(summary("list agents limit=50, blocks+tools+tags", times))
        print(f"server RSS after the run: {rss_mb(bench.server_pid):.0f} MB")


if __name__ == "__main__":
    main()
    print_counts()
