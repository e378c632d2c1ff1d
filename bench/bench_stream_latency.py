"""Wall time of a one-step turn as each kind of client sees it: a plain send, a streamed one, a background stream
(what Letta Code sends every turn, in a conversation), and when the response headers and the first event arrive.

    .venv/bin/python bench/bench_stream_latency.py [--turns 40]

Each shape also prints its server + Postgres CPU per turn (read around each request, as `bench_send_cpu.py` does).

Sequential turns on one agent (or one conversation), the project's mock LLM answering at once. A background
stream's reader reads the run's chunk log: in the process that runs the turn it is woken by the log's writer,
elsewhere by the process's 0.1 s poller (`turns/chunk_watch.py`).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT, send
from bench.harness import bench_server

LETTA_CODE = "conversation, background, tokens (Letta Code)"


def streamed(http: httpx.Client, path: str, body: dict[str, object]) -> tuple[float, float, float]:
    """(headers, first event, end) in ms for one streamed turn."""
    started = time.perf_counter()
    first = None
    with http.stream("POST", path, json=body) as response:
        headers = time.perf_counter() - started
        response.raise_for_status()
        for line in response.iter_lines():
            if first is None and line.startswith("data:"):
                first = time.perf_counter() - started
    end = time.perf_counter() - started
    return headers * 1000, (first or end) * 1000, end * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    message = {"messages": [{"role": "user", "content": "hi"}]}
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = http.post("/v1/agents/", json={**AGENT, "name": "latency"}).json()["id"]
        conversation_id = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        for i in range(10):
            send(http, agent_id, f"warm-up {i}")
        shapes = {
            "plain send": None,
            "stream": (f"/v1/agents/{agent_id}/messages/stream", {**message, "include_pings": True}),
            "stream, tokens": (f"/v1/agents/{agent_id}/messages/stream", {**message, "stream_tokens": True}),
            "background stream": (
                f"/v1/agents/{agent_id}/messages/stream",
                {**message, "background": True, "include_pings": True},
            ),
            "conversation, streamed": (
                f"/v1/conversations/{conversation_id}/messages",
                {**message, "streaming": True, "include_pings": True},
            ),
            # Letta Code's turn: its messages carry an otid (the retry token), a new one each turn.
            LETTA_CODE: (
                f"/v1/conversations/{conversation_id}/messages",
                {"streaming": True, "stream_tokens": True, "background": True, "include_pings": True},
            ),
        }
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in shapes}
        cpu = dict.fromkeys(shapes, 0.0)
        for i in range(args.turns):
            for name, shape in shapes.items():
                server_before, pg_before = bench.cpu_seconds()
                if shape is None:
                    started = time.perf_counter()
                    send(http, agent_id, f"turn {i}")
                    end = (time.perf_counter() - started) * 1000
                    times[name].append((end, end, end))
                elif name == LETTA_CODE:
                    otid = f"otid-{i}-{time.monotonic_ns()}"
                    body = {**shape[1], "messages": [{"role": "user", "content": "hi", "otid": otid}]}
                    times[name].append(streamed(http, shape[0], body))
                else:
                    times[name].append(streamed(http, *shape))
                server_after, pg_after = bench.cpu_seconds()
                cpu[name] += (server_after - server_before) + (pg_after - pg_before)
        print(f"{args.turns} turns each, p50 ms: response headers / first event / end of response; server + Postgres")
        print("CPU ms per turn")
        for name, rows in times.items():
            headers, first, end = (statistics.median(column) for column in zip(*rows, strict=True))
            print(f"  {name:<48} {headers:6.1f} / {first:6.1f} / {end:6.1f}   cpu {cpu[name] * 1000 / args.turns:5.1f}")


if __name__ == "__main__":
    main()
