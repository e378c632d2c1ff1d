"""Background vs plain streams: time to the first chunk and to [DONE], and resume latency (mock LLM at 0 ms).

    .venv/bin/python bench/bench_background.py [--n 30]

A plain stream reads its chunks in-process as the loop logs them; a background stream reads them back from the
Postgres chunk log (batched appends, polled every 0.1 s), so its first chunk and its end wait for a flush and a
poll. Resume = POST /v1/runs/{id}/stream of a finished run from seq 0, to [DONE].
"""

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server, summary

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def timed_stream(http: httpx.Client, method_url: str, body: dict[str, Any]) -> tuple[float, float, str]:
    """(seconds to the first data line, seconds to [DONE], the run id)."""
    started = time.perf_counter()
    first, run_id = 0.0, ""
    with http.stream("POST", method_url, json=body, timeout=60) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            if not first:
                first = time.perf_counter() - started
                if '"run_id":"' in line:
                    run_id = line.split('"run_id":"', 1)[1].split('"', 1)[0]
            if line == "data: [DONE]":
                return first, time.perf_counter() - started, run_id
    raise RuntimeError("stream ended without [DONE]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = http.post("/v1/agents/", json=AGENT).json()["id"]
        url = f"/v1/agents/{agent_id}/messages/stream"
        results: dict[str, tuple[list[float], list[float]]] = {"plain": ([], []), "background": ([], [])}
        run_ids: list[str] = []
        for i in range(args.n):
            for mode in ("plain", "background"):
                body = {"messages": [{"role": "user", "content": f"hi {i}"}], "stream_tokens": True}
                first, done, run_id = timed_stream(http, url, {**body, "background": mode == "background"})
                results[mode][0].append(first)
                results[mode][1].append(done)
                if mode == "background":
                    run_ids.append(run_id)
        resumes = [timed_stream(http, f"/v1/runs/{run_id}/stream", {})[1] for run_id in run_ids]
    for mode, (first, done) in results.items():
        print(summary(f"{mode} stream: first chunk", first))
        print(summary(f"{mode} stream: [DONE]", done))
    print(summary("resume of a finished run: [DONE]", resumes))


if __name__ == "__main__":
    main()
