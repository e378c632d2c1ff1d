"""Idle SSE connections: server CPU while N clients follow background runs that stay quiet.

    .venv/bin/python bench/bench_idle_streams.py [--streams 1000] [--runs 10] [--seconds 60]

Starts `--runs` background streamed sends whose LLM call the mock holds for longer than the measurement, then opens
`--streams` readers spread over them with ``POST /v1/runs/{run_id}/stream`` (as a client resuming a background
stream does) and measures the CPU of the memlet process and of Postgres over `--seconds`, while the readers get
nothing but keep-alive pings. Target (issue #13): under 5% of one core for 1,000 connections.
"""

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server
from bench.procstat import cpu_seconds, postmaster_pid
from tests.mock_llm import Reply, script_remote

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}],
}


def start_background_run(http: httpx.Client, agent_id: str) -> str:
    body = {"messages": [{"role": "user", "content": "take your time"}], "background": True}
    with http.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data:") and '"run_id"' in line:
                return str(json.loads(line[5:])["run_id"])
    raise RuntimeError("the background stream named no run")


async def follow(client: httpx.AsyncClient, run_id: str, opened: asyncio.Event, counts: dict[str, int]) -> None:
    async with client.stream("POST", f"/v1/runs/{run_id}/stream", json={}) as response:
        response.raise_for_status()
        counts["open"] += 1
        if counts["open"] >= counts["want"]:
            opened.set()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                counts["events"] += 1


async def hold(base_url: str, run_ids: list[str], streams: int, seconds: float, pids: list[int]) -> None:
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=0)
    counts = {"open": 0, "events": 0, "want": streams}
    opened = asyncio.Event()
    async with httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(None), limits=limits) as client:
        tasks = [asyncio.create_task(follow(client, run_ids[i % len(run_ids)], opened, counts)) for i in range(streams)]
        await asyncio.wait_for(opened.wait(), timeout=120)
        await asyncio.sleep(3)  # let the opening burst settle
        before = [cpu_seconds(p) for p in pids]
        events_before, started = counts["events"], time.monotonic()
        await asyncio.sleep(seconds)
        elapsed = time.monotonic() - started
        used = [(cpu_seconds(p) - b) / elapsed * 100 for p, b in zip(pids, before, strict=True)]
        print(
            f"{counts['open']} idle streams over {len(run_ids)} runs, {elapsed:.0f} s: memlet {used[0]:.1f}% "
            f"+ postgres {used[1]:.1f}% of one core = {sum(used):.1f}% (target < 5%); "
            f"{counts['events'] - events_before} events received (pings); load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    os.environ["MEMLET_LLM_TIMEOUT_S"] = str(args.seconds + 300)  # the held LLM calls must not time out and retry
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        script_remote(bench.mock_url, *(Reply.delay(args.seconds + 120) for _ in range(args.runs)))
        run_ids = []
        for i in range(args.runs):
            agent_id = http.post("/v1/agents/", json={**AGENT, "name": f"idle-{i}"}).raise_for_status().json()["id"]
            run_ids.append(start_background_run(http, agent_id))
        pids = [bench.server_pid, postmaster_pid(bench.pg_uri) or bench.server_pid]
        asyncio.run(hold(bench.base_url, run_ids, args.streams, args.seconds, pids))


if __name__ == "__main__":
    main()
