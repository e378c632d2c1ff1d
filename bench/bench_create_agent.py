"""Create agent: ``POST /v1/agents/`` with 2 memory blocks, the default tools and model and embedding handles (the
yardstick's phase a), sequentially, against a memlet server process.

    .venv/bin/python bench/bench_create_agent.py [--creates 200] [--runs 3] [--spy out.txt]

Prints wall-clock p50/p99 and the CPU per create of the server plus its Postgres (both from /proc), next to Letta
0.16.8 on the same kind of machine (../shared/letta/baseline.md, phase a): p50 202.8 ms, 97 ms server CPU.
``--spy FILE`` records the server under py-spy (raw, 400 Hz) during the measured runs
(``python3 /work/tools/spyagg.py FILE memlet`` sums it up).
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server, summary
from bench.procstat import cpu_seconds, postmaster_pid

LETTA_P50_MS, LETTA_CPU_MS = 202.8, 97
BODY = {
    "name": "bench",
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [
        {"label": "human", "value": "The human's name is Bench."},
        {"label": "persona", "value": "I am a helpful assistant."},
    ],
}


def measure(http: httpx.Client, creates: int, pids: list[int]) -> tuple[list[float], list[float]]:
    times = []
    cpu_before = [cpu_seconds(p) for p in pids]
    for _ in range(creates):
        started = time.perf_counter()
        response = http.post("/v1/agents/", json=BODY)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return times, [(cpu_seconds(p) - before) / creates * 1000 for p, before in zip(pids, cpu_before, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--spy", help="record the server under py-spy into this file during the measured runs")
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        for _ in range(20):  # warm-up: first-use work (pools, caches, prepared statements)
            http.post("/v1/agents/", json=BODY).raise_for_status()
        pids = [bench.server_pid, postmaster_pid(bench.pg_uri) or bench.server_pid]
        spy = None
        if args.spy:
            py_spy = str(Path(sys.executable).parent / "py-spy")
            command = [py_spy, "record", "-p", str(bench.server_pid), "-r", "400", "-f", "raw", "-o", args.spy]
            spy = subprocess.Popen([*command, "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        for run in range(1, args.runs + 1):
            times, (server_ms, pg_ms) = measure(http, args.creates, pids)
            cpu_ms = server_ms + pg_ms
            p50 = sorted(times)[len(times) // 2] * 1000
            print(
                summary(f"run {run}: create agent (2 blocks)", times),
                f" cpu={cpu_ms:6.2f} ms/op (server {server_ms:.2f} + pg {pg_ms:.2f})"
                f"  Letta p50 {LETTA_P50_MS} ms, cpu {LETTA_CPU_MS} ms:"
                f" {LETTA_P50_MS / p50:5.1f}x wall, {LETTA_CPU_MS / cpu_ms:5.1f}x cpu  load {os.getloadavg()[0]:.2f}",
            )
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=30)


if __name__ == "__main__":
    main()
