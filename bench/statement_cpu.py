"""Postgres CPU per statement of a turn: where the database's share of a send goes.

    .venv/bin/python bench/statement_cpu.py [--shape one|search|memory] [--turns 60] [--warm-up 30]

Serves the app in this process on an embedded Postgres, sends `--warm-up` turns of the shape to one agent, then
`--turns` more while every statement sent through asyncpg (prepared ones, and BEGIN/COMMIT as simple queries) is
timed on the server side: the CPU its backend spent, read from ``/proc/<backend pid>/schedstat`` before and after
(nanoseconds of run time; the backend runs on this machine). Prints each statement's CPU per call and per turn,
most costly first, and the sum per turn. A backend's run time includes everything it does for the statement:
planning or the cached plan, execution, triggers and foreign-key checks, and for a statement sent outside a
transaction its commit (the WAL written and flushed).
"""

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import in_process
from tests.mock_llm import Reply

SCRIPTS: dict[str, list[Reply]] = {
    "one": [],  # the mock's default answer: one step
    "search": [Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("found it")],
    "memory": [Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}), Reply.text("noted")],
}


def backend_cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


class StatementCpu:
    """Backend CPU (ns) and calls per statement text, while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.spent: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def add(self, query: str, pid: int, before: int) -> None:
        entry = self.spent[re.sub(r"\s+", " ", query.strip())[:100]]
        entry[0] += 1
        entry[1] += backend_cpu_ns(pid) - before


@contextmanager
def timed(cpu: StatementCpu) -> Iterator[None]:
    """Time every statement asyncpg sends: prepared ones (`_execute`, under fetch and execute with arguments) and
    simple queries (`execute` without arguments: BEGIN, COMMIT, ROLLBACK)."""
    connection = asyncpg.connection.Connection
    prepared, simple = connection._execute, connection.execute

    async def _execute(self: asyncpg.Connection, query: str, args: Any, *rest: Any, **kwargs: Any) -> Any:
        if not cpu.on:
            return await prepared(self, query, args, *rest, **kwargs)
        pid = self.get_server_pid()
        before = backend_cpu_ns(pid)
        try:
            return await prepared(self, query, args, *rest, **kwargs)
        finally:
            cpu.add(query, pid, before)

    async def execute(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> str:
        if not cpu.on or args:  # with arguments it goes through _execute
            return await simple(self, query, *args, **kwargs)
        pid = self.get_server_pid()
        before = backend_cpu_ns(pid)
        try:
            return await simple(self, query, *args, **kwargs)
        finally:
            cpu.add(query, pid, before)

    connection._execute = _execute  # type: ignore[method-assign]
    connection.execute = execute  # type: ignore[method-assign]
    try:
        yield
    finally:
        connection._execute = prepared  # type: ignore[method-assign]
        connection.execute = simple  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", choices=tuple(SCRIPTS), default="one")
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warm-up", type=int, default=30)
    args = parser.parse_args()
    cpu = StatementCpu()
    with (
        in_process() as (server, _),
        timed(cpu),
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        mock = server.server.config.app.state.mock_llm  # type: ignore[attr-defined]
        agent_id = http.post("/v1/agents/", json={**AGENT, "name": "statement-cpu"}).json()["id"]

        def turn(i: int) -> None:
            if SCRIPTS[args.shape]:
                mock.script(*SCRIPTS[args.shape])
            message = {"role": "user", "content": f"hello {i}"}
            response = http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [message]})
            assert response.status_code == 200, response.text
            assert response.json()["usage"]["step_count"] == (1 if args.shape == "one" else 2)

        for i in range(args.warm_up):
            turn(i)
        cpu.on = True
        for i in range(args.turns):
            turn(i)
        cpu.on = False
    print(f"Postgres backend CPU per statement, {args.shape} turns ({args.turns} after {args.warm_up} to warm up):")
    total = 0
    for text, (calls, ns) in sorted(cpu.spent.items(), key=lambda item: -item[1][1]):
        total += ns
        each, per_turn = ns / calls / 1000, ns / args.turns / 1000
        print(f"{calls / args.turns:5.2f} a turn {each:7.1f} us each {per_turn:7.1f} us a turn  {text}")
    print(f"sum: {total / args.turns / 1000:.1f} us of Postgres CPU a turn")


if __name__ == "__main__":
    main()
