"""Scale: list messages at 100k messages on one agent, list agents at 100k agents, and a turn's cost at 1k vs
100k messages of history, against a memlet server process. Rows are seeded with SQL (bench/seed.py).

    .venv/bin/python bench/bench_scale.py [--messages 100000] [--agents 100000] [--reps 40] [--turns 30]
        [--only messages|turns|agents]

Targets (issue #13): list messages p95 < 20 ms in both orders at any cursor position; list agents p95 < 30 ms;
a turn at 100k messages within 10% of one at 1k. Letta 0.16.8 (../shared/letta/baseline.md): list messages
limit=50 at 1,000 messages p50 146.3 ms; list agents limit=50 at 1,000 agents p50 383.5 ms. The query plans of the
history page are printed (EXPLAIN ANALYZE) so an index that stops being used shows.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server
from bench.procstat import cpu_seconds, postmaster_pid
from bench.seed import add_history, copy_agents
from tests.mock_llm import Reply, script_remote

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


def line(name: str, seconds: list[float], extra: str = "") -> str:
    ms = sorted(s * 1000 for s in seconds)
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return f"{name:<58} n={len(ms):<4} p50={q[49]:7.2f} ms  p95={q[94]:7.2f} ms {extra}"


PIDS: list[int] = []  # the server and its Postgres, whose CPU each measurement reports


def timed(http: httpx.Client, url: str, params: dict[str, object], reps: int, name: str) -> str:
    http.get(url, params=params).raise_for_status()
    times = []
    before = sum(cpu_seconds(p) for p in PIDS)
    for _ in range(reps):
        started = time.perf_counter()
        http.get(url, params=params).raise_for_status()
        times.append(time.perf_counter() - started)
    cpu_ms = (sum(cpu_seconds(p) for p in PIDS) - before) / reps * 1000
    return line(name, times, f" cpu={cpu_ms:5.1f} ms/op (server+pg)")


def ids_at(pg_uri: str, sql: str, *args: object) -> list[str]:
    async def go() -> list[str]:
        conn = await asyncpg.connect(pg_uri)
        try:
            return [r[0] for r in await conn.fetch(sql, *args)]
        finally:
            await conn.close()

    return asyncio.run(go())


def explain(pg_uri: str, agent_id: str, cursor: str) -> str:
    """The plan of the newest-first history page after a cursor, as memlet's repository shapes it."""
    sql = (
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT * FROM messages WHERE agent_id = $1 "
        "AND sequence_id < (SELECT sequence_id FROM messages WHERE id = $2) ORDER BY sequence_id DESC LIMIT 50"
    )
    return "\n".join("    " + r for r in ids_at(pg_uri, sql, agent_id, cursor))


def list_messages(http: httpx.Client, pg_uri: str, agent_id: str, total: int, reps: int) -> None:
    positions = {"first": 0, "middle": total // 2, "last": total - 60}
    by_seq = "SELECT id FROM messages WHERE agent_id = $1 ORDER BY sequence_id OFFSET $2 LIMIT 1"
    url = f"/v1/agents/{agent_id}/messages"
    print(timed(http, url, {"limit": 50}, reps, f"list messages limit=50 (newest), {total} msgs"))
    for where, offset in positions.items():  # no order (the SDKs' default): the newest 50 on the cursor's side
        cursor = ids_at(pg_uri, by_seq, agent_id, offset)[0]
        for side in ("after", "before"):
            print(timed(http, url, {"limit": 50, side: cursor}, reps, f"list messages (newest) {side}=<{where}>"))
    for order in ("asc", "desc"):
        print(timed(http, url, {"limit": 50, "order": order}, reps, f"list messages order={order}, no cursor"))
        for where, offset in positions.items():
            cursor = ids_at(pg_uri, by_seq, agent_id, offset)[0]
            for side in ("after", "before"):
                params = {"limit": 50, "order": order, side: cursor}
                print(timed(http, url, params, reps, f"list messages order={order} {side}=<{where}>"))
    print("  plan, newest-first page after the middle message:")
    print(explain(pg_uri, agent_id, ids_at(pg_uri, by_seq, agent_id, total // 2)[0]))


def list_agents(http: httpx.Client, pg_uri: str, template: str, total: int, reps: int) -> None:
    copy_agents(pg_uri, template, total - 1)
    middle = ids_at(pg_uri, "SELECT id FROM agents ORDER BY created_at, id OFFSET $1 LIMIT 1", total // 2)[0]
    for order in ("desc", "asc"):
        params: dict[str, object] = {"limit": 50, "order": order}
        print(timed(http, "/v1/agents/", params, reps, f"list agents limit=50 order={order}, {total} agents"))
        params["after"] = middle
        print(timed(http, "/v1/agents/", params, reps, f"list agents limit=50 order={order} after=<middle>"))
    # Filters that match few of the agents: an index walk in created_at order that filters as it goes would read
    # them all. Ten agents get a tag and a project first.
    execute(
        pg_uri,
        "WITH few AS (SELECT id FROM agents ORDER BY created_at OFFSET 1000 LIMIT 10) "
        "UPDATE agents SET project_id = 'project-bench' FROM few WHERE agents.id = few.id",
    )
    execute(
        pg_uri,
        "INSERT INTO agents_tags (agent_id, tag) SELECT id, 'bench-tag' FROM agents WHERE project_id = 'project-bench'",
    )
    execute(pg_uri, "ANALYZE agents; ANALYZE agents_tags")
    some = {"name": "copy-77777", "query_text": "copy-7777", "tags": "bench-tag", "project_id": "project-bench"}
    for key, value in some.items():
        print(timed(http, "/v1/agents/", {"limit": 50, key: value}, reps, f"list agents limit=50 {key}={value}"))
    print("  plan, newest-first agents page after the middle agent:")
    sql = (
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT * FROM agents WHERE organization_id = $1 "
        "AND (created_at, id) < ((SELECT created_at FROM agents WHERE id = $2), $2) "
        "ORDER BY created_at DESC, id DESC LIMIT 50"
    )
    org = ids_at(pg_uri, "SELECT organization_id FROM agents WHERE id = $1", middle)[0]
    print("\n".join("    " + r for r in ids_at(pg_uri, sql, org, middle)))


def execute(pg_uri: str, sql: str) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(pg_uri)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(go())


def turns(http: httpx.Client, bench_pids: list[int], mock_url: str, small: str, large: str, n: int) -> None:
    def send(agent_id: str) -> float:
        started = time.perf_counter()
        http.post(
            f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]}
        ).raise_for_status()
        return time.perf_counter() - started

    def memory_turn(agent_id: str) -> float:
        script_remote(
            mock_url,
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "likes tea"}),
            Reply.text("noted"),
        )
        return send(agent_id)

    for kind, call in (("one-step turn", send), ("memory-edit turn (2 steps)", memory_turn)):
        results = {}
        for agent_id in (small, large):  # warm-up
            call(agent_id)
        for label, agent_id in (("1k", small), ("100k", large)):
            before = sum(cpu_seconds(p) for p in bench_pids)
            times = [call(agent_id) for _ in range(n)]
            cpu_ms = (sum(cpu_seconds(p) for p in bench_pids) - before) / n * 1000
            results[label] = (statistics.median(times), cpu_ms)
            print(line(f"{kind}, {label} messages of history", times, f" cpu={cpu_ms:6.2f} ms/turn (server+pg)"))
        ratio_wall = results["100k"][0] / results["1k"][0]
        ratio_cpu = results["100k"][1] / results["1k"][1]
        print(f"  {kind}: 100k / 1k = {ratio_wall:.2f}x wall p50, {ratio_cpu:.2f}x cpu (target within 1.10x)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--only", choices=("messages", "turns", "agents"), help="run one part (default: all)")
    args = parser.parse_args()
    run = {args.only} if args.only else {"messages", "turns", "agents"}
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=120) as http:
        print(f"load average at start: {os.getloadavg()}")
        mock_url = bench.mock_url
        small = http.post("/v1/agents/", json={**AGENT, "name": "history-1k"}).raise_for_status().json()["id"]
        large = http.post("/v1/agents/", json={**AGENT, "name": "history-100k"}).raise_for_status().json()["id"]
        PIDS[:] = [bench.server_pid, postmaster_pid(bench.pg_uri) or bench.server_pid]
        if run & {"messages", "turns"}:
            add_history(bench.pg_uri, small, 1000)
            add_history(bench.pg_uri, large, args.messages)
        if "messages" in run:
            list_messages(http, bench.pg_uri, large, args.messages, args.reps)
            count = (
                "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT message_count FROM agents WHERE id = $1"
            )
            print("  plan of the recall count a memory edit recompiles the system prompt with (trigger-kept counter):")
            print("\n".join("    " + r for r in ids_at(bench.pg_uri, count, large)))
        if "turns" in run:
            turns(http, PIDS, mock_url, small, large, args.turns)
        if "agents" in run:
            list_agents(http, bench.pg_uri, small, args.agents, args.reps)
        print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
