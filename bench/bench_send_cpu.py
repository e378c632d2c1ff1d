"""Server CPU per sequential send (utime+stime of the memlet process) and the cost of metrics recording.

    .venv/bin/python bench/bench_send_cpu.py [--sends 300]
    MEMLET_METRICS_ENABLED=false .venv/bin/python bench/bench_send_cpu.py    # without the /metrics middleware

CPU time of the server process is far less sensitive than wall time to other load on the machine.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT, send
from bench.harness import bench_server
from memlet import metrics


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recording_cost_us(n: int = 100_000) -> float:
    """What one send records: a request, an LLM call, a run and a lock wait."""

    class Route:
        path_format = "/agents/{agent_id}/messages"

    scope = {"path": "/v1/agents/agent-1/messages", "route": Route(), "path_params": {"agent_id": "agent-1"}}
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        route = metrics.route_template(scope)
        metrics.HTTP_REQUESTS.labels("POST", route, "200").inc()
        metrics.HTTP_LATENCY.labels("POST", route).observe(time.perf_counter() - t)
        with metrics.llm_call("openai"):
            pass
        metrics.run_finished("completed", "end_turn")
        metrics.lock_waited(t, acquired=True)
    return (time.perf_counter() - started) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=300)
    args = parser.parse_args()
    print(f"metrics recording per send: {recording_cost_us():.1f} us")
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = http.post("/v1/agents/", json={**AGENT, "name": "cpu"}).json()["id"]
        for i in range(20):
            send(http, agent_id, f"warm-up {i}")
        before = cpu_seconds(bench.server_pid)
        walls = []
        for i in range(args.sends):
            started = time.perf_counter()
            send(http, agent_id, f"hello {i}")
            walls.append(time.perf_counter() - started)
        spent = cpu_seconds(bench.server_pid) - before
    walls.sort()
    print(f"server CPU per send: {spent / args.sends * 1000:.2f} ms   wall p50: {walls[len(walls) // 2] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
