"""Soak: mixed traffic against one memlet server process for N minutes, printing its RSS every minute.

    .venv/bin/python bench/soak.py --minutes 10 [--clients 2]

Each client loops over a bounded pool of agents (created, used and deleted in turn, so the database stays small):
create an agent, send a message (blocking and streamed), make it edit its memory (`memory_insert`, then a reply; in
the mix since session 18), start a background stream and read it back through
``POST /v1/runs/{id}/stream``, list messages, list agents, retrieve the agent, insert and list archival memory, and
delete the oldest agent once the pool is full. Growth in the RSS series with a flat request mix points at an
unbounded cache or log in the server process.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server
from bench.procstat import rss_mb
from tests.mock_llm import Reply
from tests.mock_llm.server import script_remote

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}
POOL = 10


def say(text: str, **extra: object) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def one_round(http: httpx.Client, mock_url: str, pool: list[str], n: int, counts: Counter[str]) -> None:
    agent_id = http.post("/v1/agents/", json={**AGENT, "name": f"soak-{n}"}).raise_for_status().json()["id"]
    pool.append(agent_id)
    http.post(f"/v1/agents/{agent_id}/messages", json=say(f"hello {n}")).raise_for_status()
    # Another client's send may take these replies first: any agent doing the edit will do.
    edit = Reply.tool_call("memory_insert", {"label": "human", "new_string": f"Fact {n}."})
    script_remote(mock_url, edit, Reply.text("noted"))
    http.post(f"/v1/agents/{agent_id}/messages", json=say("remember this")).raise_for_status()
    with http.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=say("stream please")) as response:
        for _ in response.iter_lines():
            pass
    run_id = None
    background = say("in the background", background=True)
    with http.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=background) as response:
        for line in response.iter_lines():
            if run_id is None and '"run_id"' in line:
                run_id = line.split('"run_id":"', 1)[1].split('"', 1)[0]
    if run_id:
        with http.stream("POST", f"/v1/runs/{run_id}/stream", json={}) as response:
            for _ in response.iter_lines():
                pass
    http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 50}).raise_for_status()
    http.get("/v1/agents/", params={"limit": 50}).raise_for_status()
    http.get(f"/v1/agents/{agent_id}").raise_for_status()
    http.post(f"/v1/agents/{agent_id}/archival-memory", json={"text": f"fact {n}"}).raise_for_status()
    http.get(f"/v1/agents/{agent_id}/archival-memory", params={"limit": 10}).raise_for_status()
    if len(pool) > POOL:
        http.delete(f"/v1/agents/{pool.pop(0)}").raise_for_status()
    counts["rounds"] += 1


def client(base_url: str, mock_url: str, stop: float, counter: itertools.count[int], counts: Counter[str]) -> None:
    pool: list[str] = []
    with httpx.Client(base_url=base_url, timeout=120) as http:
        while time.monotonic() < stop:
            try:
                one_round(http, mock_url, pool, next(counter), counts)
            except httpx.HTTPError as exc:
                counts[f"error {type(exc).__name__}"] += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args()
    with bench_server() as bench:
        counts: Counter[str] = Counter()
        started = time.monotonic()
        stop = started + args.minutes * 60
        counter = itertools.count()
        threads = [
            threading.Thread(target=client, args=(bench.base_url, bench.mock_url, stop, counter, counts))
            for _ in range(args.clients)
        ]
        print(f"minute 0: RSS {rss_mb(bench.server_pid):6.1f} MB (idle, after start-up)", flush=True)
        for thread in threads:
            thread.start()
        minute = 1
        while any(t.is_alive() for t in threads):
            time.sleep(min(1.0, max(0.0, started + minute * 60 - time.monotonic())))
            if time.monotonic() >= started + minute * 60:
                print(f"minute {minute}: RSS {rss_mb(bench.server_pid):6.1f} MB  {dict(counts)}", flush=True)
                minute += 1
        for thread in threads:
            thread.join()
        print(f"end: RSS {rss_mb(bench.server_pid):6.1f} MB  {dict(counts)}", flush=True)


if __name__ == "__main__":
    main()
