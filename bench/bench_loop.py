"""Agent-loop latency with the mock LLM at 0 ms: per-message time, 20-client throughput, SQL statements per send.

    .venv/bin/python bench/bench_loop.py [--seq 100] [--clients 20] [--per-client 20]

Letta 0.16.8 on the same kind of machine (../shared/letta/baseline.md): send message p50 786.9 ms / p99 1349.4 ms,
1.25 msg/s sequential; 20 clients x 20 messages on their own agents: 2.03 msg/s.
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

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def send(http: httpx.Client, agent_id: str, text: str) -> dict:  # type: ignore[type-arg]
    response = http.post(
        f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]}, timeout=120
    )
    response.raise_for_status()
    return response.json()  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--per-client", type=int, default=20)
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = http.post("/v1/agents/", json={**AGENT, "name": "seq"}).json()["id"]
        times, steps = [], 0
        for i in range(args.seq):
            started = time.perf_counter()
            body = send(http, agent_id, f"hello number {i}")
            times.append(time.perf_counter() - started)
            steps += body["usage"]["step_count"]
        print(summary("send message, sequential, one agent", times))
        print(f"{'':<44} steps per message={steps / args.seq:.2f}  sequential rate={args.seq / sum(times):.1f} msg/s")

        agents = [http.post("/v1/agents/", json={**AGENT, "name": f"c{i}"}).json()["id"] for i in range(args.clients)]

        def client_run(agent: str) -> list[float]:
            out = []
            with httpx.Client(base_url=bench.base_url, timeout=120) as own:
                for j in range(args.per_client):
                    started = time.perf_counter()
                    send(own, agent, f"message {j}")
                    out.append(time.perf_counter() - started)
            return out

        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            results = [t for ts in pool.map(client_run, agents) for t in ts]
        wall = time.perf_counter() - started
        print(summary(f"send message, {args.clients} clients x {args.per_client}", results))
        print(f"{'':<44} throughput={len(results) / wall:.1f} msg/s")
        print(f"server RSS after the run: {rss_mb(bench.server_pid):.0f} MB")


if __name__ == "__main__":
    main()
    print_counts()
