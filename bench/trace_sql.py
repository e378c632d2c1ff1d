"""SQL statements (round trips) per request: create agent, list agents, list messages, a send of one step and of two steps, and\na conversation turn as Letta Code sends it (streamed, tokens, in the background).

    .venv/bin/python bench/trace_sql.py [--quiet]

Counts are what Postgres receives on both engines, the API's and the turns': the statements, and the round trips
(the statements plus the BEGIN, COMMIT and ROLLBACK around them, which asyncpg sends as simple queries). The
statements are printed unless --quiet, transaction control indented.
bench_state_api.py and bench_loop.py print the counts next to their timings.
"""

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import in_process
from tests.mock_llm import Reply

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}


@contextmanager
def transaction_control(log: list[str]) -> Iterator[None]:
    """Log the simple queries asyncpg sends (BEGIN, COMMIT, ROLLBACK); prepared statements go another way."""
    execute = asyncpg.Connection.execute

    async def logged(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> str:
        log.append(f"  -- {query.strip()}")
        return await execute(self, query, *args, **kwargs)

    asyncpg.Connection.execute = logged  # type: ignore[method-assign]
    try:
        yield
    finally:
        asyncpg.Connection.execute = execute  # type: ignore[method-assign]


def statement_counts(*, verbose: bool = False) -> dict[str, tuple[int, int]]:
    """(statements, round trips) per request."""
    log: list[str] = []
    with (
        in_process() as (server, _),
        transaction_control(log),
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        app = server.server.config.app  # type: ignore[attr-defined]

        def record(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            log.append(" ".join(statement.split())[:160])

        for engine in (app.state.engine, app.state.turn_engine):
            event.listen(engine.sync_engine, "before_cursor_execute", record)
        agent_id = http.post("/v1/agents/", json=AGENT).json()["id"]
        say = {"messages": [{"role": "user", "content": "hi"}]}
        http.post(f"/v1/agents/{agent_id}/messages", json=say)  # warm-up

        def two_steps() -> httpx.Response:
            server_mock.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("found it"))
            return http.post(f"/v1/agents/{agent_id}/messages", json=say)

        def memory_edit() -> httpx.Response:
            edit = Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."})
            server_mock.script(edit, Reply.text("noted"))
            return http.post(f"/v1/agents/{agent_id}/messages", json=say)

        conversation_id = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        letta_code_turn = {**say, "streaming": True, "stream_tokens": True, "background": True, "include_pings": True}
        http.post(f"/v1/conversations/{conversation_id}/messages", json=letta_code_turn)  # warm-up

        server_mock = app.state.mock_llm
        counts: dict[str, tuple[int, int]] = {}
        for title, call in (
            ("create agent (2 blocks)", lambda: http.post("/v1/agents/", json=AGENT)),
            ("list agents limit=50", lambda: http.get("/v1/agents/", params={"limit": 50})),
            ("list messages limit=50", lambda: http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 50})),
            ("send message, 1 step", lambda: http.post(f"/v1/agents/{agent_id}/messages", json=say)),
            (
                "conversation send, 1 step, background stream (Letta Code)",
                lambda: http.post(f"/v1/conversations/{conversation_id}/messages", json=letta_code_turn),
            ),
            ("send message, 2 steps (tool call)", two_steps),
            ("send message, 2 steps (memory edit)", memory_edit),
        ):
            log.clear()
            call().raise_for_status()
            statements = sum(1 for line in log if not line.startswith("  -- "))
            counts[title] = (statements, len(log))
            if verbose:
                print(f"\n== {title}: {statements} statements, {len(log)} round trips")
                for line in log:
                    print("  ", line)
        return counts


def print_counts() -> None:
    for title, (statements, round_trips) in statement_counts().items():
        print(f"{'SQL statements: ' + title:<50} {statements}  ({round_trips} round trips)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if args.quiet:
        print_counts()
    else:
        statement_counts(verbose=True)


if __name__ == "__main__":
    main()
