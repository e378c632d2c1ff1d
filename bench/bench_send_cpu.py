"""CPU per sequential send: the memlet server process and the embedded Postgres (every backend under its data
dir), for one-step and two-step turns, beside Letta 0.16.8's numbers; and the cost of metrics recording.

    .venv/bin/python bench/bench_send_cpu.py [--sends 100] [--runs 2] [--two-step search|memory|both]
    MEMLET_METRICS_ENABLED=false .venv/bin/python bench/bench_send_cpu.py    # without the /metrics middleware

CPU time of the processes is far less sensitive than wall time to other load on the machine. Each measurement
sends `--sends` messages to a fresh agent, as the yardstick's phase b does (100 on one agent): the cost of a send
grows with the agent's in-context buffer, so runs are only comparable at the same count. Two two-step turns: a
`conversation_search` call followed by a reply (the same script as `trace_sql.py`), and a memory edit
(`memory_insert` into the human block, the default letta_v1_agent's memory tool, then a reply): the edit rewrites
the block and the system message. A two-step agent gains four messages a send where a one-step one gains two,
so after `--sends` sends its buffer is twice as long: part of the ratio is that longer buffer. So each run also
measures the shapes on one agent, alternating a one-step send with each two-step shape (`paired`): every shape then
meets the same history, and the CPU between the two reads around a send is that send's.
"""

import argparse
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT, send
from bench.harness import Bench, bench_server
from memlet import metrics
from tests.mock_llm import Reply

# ../shared/letta/baseline.md, phase b (server CPU only: the baseline did not count Postgres).
LETTA_SEND = "Letta 0.16.8: 429 ms server CPU per one-step send, p50 786.9 ms"
TARGET = "target (issue 13): <= 10 ms server + Postgres CPU per one-step send, p50 <= 12 ms, two-step <= 1.6x"


def recording_cost_us(n: int = 100_000) -> float:
    """What one send records: a request, an LLM call, a run and a lock wait."""

    class Route:
        path_format = "/v1/agents/{agent_id}/messages"

    scope = {"path": "/v1/agents/agent-1/messages", "route": Route(), "path_params": {"agent_id": "agent-1"}}
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        count, latency = metrics.http_series("POST", metrics.route_template(scope), 200)
        count.inc()
        latency.observe(time.perf_counter() - t)
        with metrics.llm_call("openai"):
            pass
        metrics.run_finished("completed", "end_turn")
        metrics.lock_waited(t, acquired=True)
    return (time.perf_counter() - started) / n * 1e6


TWO_STEPS = {
    "search": [Reply.tool_call("conversation_search", {"query": "tea"}).to_dict(), Reply.text("found it").to_dict()],
    "memory": [
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}).to_dict(),
        Reply.text("noted").to_dict(),
    ],
}


def measure(bench: Bench, http: httpx.Client, sends: int, *, shape: str) -> tuple[float, float, float]:
    """(server CPU ms, Postgres CPU ms, wall p50 ms) per send of `shape` ("one" step, or a two-step key of
    `TWO_STEPS`), to a new agent."""
    steps = 1 if shape == "one" else 2
    agent_id = http.post("/v1/agents/", json={**AGENT, "name": f"cpu-{shape}"}).json()["id"]
    server_before, pg_before = bench.cpu_seconds()
    walls = []
    for i in range(sends):
        if steps == 2:
            _script(bench, shape)
        started = time.perf_counter()
        body = send(http, agent_id, f"hello {i}")
        walls.append(time.perf_counter() - started)
        assert body["usage"]["step_count"] == steps, body["usage"]
    server_after, pg_after = bench.cpu_seconds()
    walls.sort()
    per = 1000 / sends
    return (server_after - server_before) * per, (pg_after - pg_before) * per, walls[len(walls) // 2] * 1000


def _script(bench: Bench, shape: str) -> None:
    # Scripting the mock is a request to another process; it is not timed, and costs memlet nothing.
    url = f"{bench.mock_url.removesuffix('/v1')}/_mock/script"
    httpx.post(url, json={"replies": TWO_STEPS[shape]}).raise_for_status()


def paired(bench: Bench, http: httpx.Client, sends: int, shapes: list[str]) -> dict[str, tuple[float, float]]:
    """(server CPU ms, Postgres CPU ms) per send of each shape, the shapes sent in turn to one new agent."""
    agent_id = http.post("/v1/agents/", json={**AGENT, "name": "cpu-paired"}).json()["id"]
    spent = {shape: [0.0, 0.0] for shape in shapes}
    for i in range(sends):
        for shape in shapes:
            if shape != "one":
                _script(bench, shape)
            server_before, pg_before = bench.cpu_seconds()
            body = send(http, agent_id, f"hello {i}")
            server_after, pg_after = bench.cpu_seconds()
            assert body["usage"]["step_count"] == (1 if shape == "one" else 2), body["usage"]
            spent[shape][0] += server_after - server_before
            spent[shape][1] += pg_after - pg_before
    return {shape: (server * 1000 / sends, pg * 1000 / sends) for shape, (server, pg) in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=100)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--two-step", choices=("search", "memory", "both"), default="both")
    args = parser.parse_args()
    shapes = ["one", *(TWO_STEPS if args.two_step == "both" else [args.two_step])]
    titles = {"one": "1-step send", "search": "2-step (search)", "memory": "2-step (memory)"}
    print(f"metrics recording per send: {recording_cost_us():.1f} us")
    print(LETTA_SEND)
    print(TARGET)
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        warm_up = http.post("/v1/agents/", json={**AGENT, "name": "warm-up"}).json()["id"]
        for i in range(20):
            send(http, warm_up, f"warm-up {i}")
        for run in range(1, args.runs + 1):
            one = None
            for shape in shapes:
                server, pg, p50 = measure(bench, http, args.sends, shape=shape)
                total = server + pg
                ratio = f"  ({total / one:.2f}x one step)" if one else ""
                one = one or total
                print(
                    f"run {run}, {titles[shape]:<15}: server CPU {server:6.2f} ms + Postgres CPU {pg:5.2f} ms"
                    f" = {total:6.2f} ms per send{ratio}   wall p50 {p50:5.1f} ms"
                )
            costs = paired(bench, http, args.sends // 2, shapes)
            one_total = sum(costs["one"])
            for shape, (server, pg) in costs.items():
                ratio = f"  ({(server + pg) / one_total:.2f}x one step)" if shape != "one" else ""
                print(
                    f"run {run}, paired {titles[shape]:<15}: server CPU {server:6.2f} ms + Postgres CPU {pg:5.2f} ms"
                    f" = {server + pg:6.2f} ms per send{ratio}"
                )


if __name__ == "__main__":
    main()
