"""CPU per streamed token: a one-step turn whose answer is short (10 words) or long (410 words, one chunk each from
the mock LLM), sent three ways, and the server + Postgres CPU each extra chunk costs.

    .venv/bin/python bench/bench_token_stream.py [--turns 30] [--shapes blocking,stream,letta-code] [--gap-ms 0]

Shapes: a blocking send (`POST /v1/agents/{id}/messages`; the provider's answer is still read as a stream), a
token stream (`/messages/stream` with `stream_tokens`), and Letta Code's turn (a conversation send with
`streaming`, `stream_tokens`, `background` and pings, read through the run's chunk log). The yardstick's answers
are a few chunks long; a real model streams one chunk per token, so a long answer's cost is mostly this per-chunk
cost. By default the mock sends its chunks at once; `--gap-ms` spaces them out as a model does (20 ms: 50 tokens a
second), which is what decides how many chunks each write of the run's chunk log holds. Letta's baseline has no
streaming row.
"""

import argparse
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import Bench, bench_server
from tests.mock_llm import Reply, script_remote

SHORT, LONG = 10, 410
SHAPES = ("blocking", "stream", "letta-code")


class Turns:
    def __init__(self, bench: Bench, http: httpx.Client, gap_s: float = 0.0) -> None:
        self.bench, self.http, self.gap_s = bench, http, gap_s
        self.agent = http.post("/v1/agents/", json={**AGENT, "name": "token-stream"}).json()["id"]
        self.conversation = http.post("/v1/conversations/", params={"agent_id": self.agent}, json={}).json()["id"]

    def turn(self, shape: str, words: int, n: int) -> None:
        answer = Reply.text(" ".join(f"word{i}" for i in range(words))).paced(self.gap_s)
        script_remote(self.bench.mock_url, answer)
        message = {"role": "user", "content": f"hello {n}", "otid": f"otid-{n}-{time.monotonic_ns()}"}
        if shape == "blocking":
            self.http.post(f"/v1/agents/{self.agent}/messages", json={"messages": [message]}).raise_for_status()
            return
        if shape == "stream":
            path, body = f"/v1/agents/{self.agent}/messages/stream", {"stream_tokens": True}
        else:
            path = f"/v1/conversations/{self.conversation}/messages"
            body = {"streaming": True, "stream_tokens": True, "background": True, "include_pings": True}
        with self.http.stream("POST", path, json={**body, "messages": [message]}) as response:
            response.raise_for_status()
            text = "".join(response.iter_text())
        assert "[DONE]" in text and (words < LONG or text.count("word") >= LONG), text[-300:]

    def cpu_per_turn(self, shape: str, words: int, turns: int) -> tuple[float, float]:
        """Server and Postgres CPU (ms) per turn."""
        server, postgres = self.bench.cpu_seconds()
        for n in range(turns):
            self.turn(shape, words, n)
        server_after, postgres_after = self.bench.cpu_seconds()
        return (server_after - server) / turns * 1e3, (postgres_after - postgres) / turns * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--gap-ms", type=float, default=0.0, help="the mock's pause between chunks")
    args = parser.parse_args()
    shapes = [s for s in args.shapes.split(",") if s]
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=120) as http:
        turns = Turns(bench, http, args.gap_ms / 1000)
        for n in range(10):  # warm-up: pools, statements, the conversation's first turns
            for shape in shapes:
                turns.turn(shape, SHORT, n)
        for shape in shapes:
            short = turns.cpu_per_turn(shape, SHORT, args.turns)
            long = turns.cpu_per_turn(shape, LONG, args.turns)
            extra = LONG - SHORT
            print(
                f"{shape:10s} {SHORT} words: server {short[0]:6.2f} + Postgres {short[1]:5.2f} ms a turn;"
                f" {LONG} words: server {long[0]:6.2f} + Postgres {long[1]:5.2f} ms;"
                f" per extra chunk: server {(long[0] - short[0]) / extra * 1e3:5.1f}"
                f" + Postgres {(long[1] - short[1]) / extra * 1e3:4.1f} us",
                flush=True,
            )


if __name__ == "__main__":
    main()
