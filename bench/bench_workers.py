"""Workers: send throughput of ``memlet server --workers 1`` and ``--workers 2`` on the same external Postgres.

    .venv/bin/python bench/bench_workers.py [--clients 20] [--per-client 20] [--runs 2]

Each configuration gets a fresh database and its own agents (one per client, as ../shared/bench/perf_anchor.py
phase c). Prints msg/s, the CPU per message of the memlet processes and of Postgres, and the ratio of two workers
to one (target >= 1.7x). Letta 0.16.8 (../shared/letta/baseline.md, phase c): 2.03 msg/s with 20 clients.
Two cores shared with other work cap what a second worker can add: the load average is printed beside each run.

It also prints the CPU per message of the mock LLM and of this client, and the ceiling they set: every message costs
memlet + Postgres + mock + client CPU on the same cores, so no number of workers serves more than
cores / (that sum) messages a second; two workers over one can reach at most that rate over one worker's.
"""

import argparse
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server
from bench.procstat import cpu_seconds, postmaster_pid

LETTA_MSG_S = 2.03
AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def throughput(workers: int, clients: int, per_client: int) -> tuple[float, float]:
    with bench_server(workers) as bench, httpx.Client(base_url=bench.base_url, timeout=120) as http:
        agents = [http.post("/v1/agents/", json={**AGENT, "name": f"w{i}"}).json()["id"] for i in range(clients)]

        def client_run(agent_id: str) -> int:
            with httpx.Client(base_url=bench.base_url, timeout=120) as own:
                for j in range(per_client):
                    body = {"messages": [{"role": "user", "content": f"message {j}"}]}
                    own.post(f"/v1/agents/{agent_id}/messages", json=body).raise_for_status()
            return per_client

        warm_up = {"messages": [{"role": "user", "content": "warm-up"}]}
        for agent_id in agents[: min(4, clients)]:  # warm the workers' pools a little
            http.post(f"/v1/agents/{agent_id}/messages", json=warm_up).raise_for_status()
        pg = postmaster_pid(bench.pg_uri)
        server_before, pg_before = cpu_seconds(bench.server_pid), cpu_seconds(pg) if pg else 0.0
        mock_before, client_before = cpu_seconds(bench.mock_pid), _own_cpu_s()
        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            sent = sum(pool.map(client_run, agents))
        wall = time.perf_counter() - started
        server_ms = (cpu_seconds(bench.server_pid) - server_before) / sent * 1000
        pg_ms = ((cpu_seconds(pg) - pg_before) if pg else 0.0) / sent * 1000
        mock_ms = (cpu_seconds(bench.mock_pid) - mock_before) / sent * 1000
        client_ms = (_own_cpu_s() - client_before) / sent * 1000
        rate = sent / wall
        everything = server_ms + pg_ms + mock_ms + client_ms
        machine_max = (os.cpu_count() or 1) * 1000 / everything
        print(
            f"workers={workers}: {sent} msgs in {wall:6.1f} s = {rate:6.1f} msg/s "
            f"(Letta {LETTA_MSG_S} msg/s: {rate / LETTA_MSG_S:5.1f}x)  cpu/msg: memlet {server_ms:5.1f} ms "
            f"+ postgres {pg_ms:5.1f} ms + mock {mock_ms:4.1f} ms + client {client_ms:4.1f} ms  "
            f"load {os.getloadavg()[0]:.2f}; at this CPU per message the machine serves at most {machine_max:.1f} msg/s",
            flush=True,
        )
        return rate, machine_max


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--per-client", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for run in range(1, args.runs + 1):
        one, _ = throughput(1, args.clients, args.per_client)
        two, cap = throughput(2, args.clients, args.per_client)
        print(
            f"run {run}: two workers / one = {two / one:.2f}x (target >= 1.7x); "
            f"this machine's cores cap it at {cap / one:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
