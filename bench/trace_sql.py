"""Print the SQL statements (round trips) one request of each kind sends: create agent, list agents, send message.

.venv/bin/python bench/trace_sql.py
"""

import sys
from pathlib import Path

import httpx
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import in_process


def main() -> None:
    with in_process() as (server, _), httpx.Client(base_url=server.base_url, timeout=60) as http:
        log: list[str] = []
        engine = server.server.config.app.state.engine  # type: ignore[attr-defined]

        def record(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            log.append(" ".join(statement.split())[:160])

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        agent_id = http.post("/v1/agents/", json=AGENT).json()["id"]
        http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "warm up"}]})
        for title, call in (
            ("create agent", lambda: http.post("/v1/agents/", json=AGENT)),
            ("list agents", lambda: http.get("/v1/agents/", params={"limit": 50})),
            (
                "send message",
                lambda: http.post(
                    f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]}
                ),
            ),
        ):
            log.clear()
            call().raise_for_status()
            print(f"\n== {title}: {len(log)} statements")
            for line in log:
                print("  ", line)


if __name__ == "__main__":
    main()
