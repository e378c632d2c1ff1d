"""CPU of a turn's first reads, in this process: `LoopRepository.load_state` (agent, blocks, tools, in-context
messages) and the system message's staleness check, on an agent with a grown buffer, in a transaction as the loop
runs them (the run's start INSERT left out). Prints this process' CPU and the embedded Postgres' per load.

    .venv/bin/python bench/bench_load_state.py [--sends 100] [--loads 500] [--runs 3]

The agent gets `--sends` one-step sends through a real server first (two rows each: ~200 in-context rows).
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT, send
from bench.harness import Bench, bench_server, postgres_cpu_s
from memlet.agents.system_message import refresh_if_stale
from memlet.config import Settings
from memlet.db.engine import create_sessionmaker, create_turn_engine
from memlet.ids import DEFAULT_ORG_ID
from memlet.loop.agent_state import LoopRepository


async def measure(bench: Bench, agent_id: str, loads: int, runs: int) -> None:
    engine = create_turn_engine(bench.pg_uri, Settings())
    async with engine.connect() as conn:
        maker = create_sessionmaker(engine)
        maker.configure(bind=conn)

        async def load() -> int:
            async with maker() as session, session.begin():
                state = await LoopRepository(session).load_state_or_404(agent_id, DEFAULT_ORG_ID)
                state.messages[0] = await refresh_if_stale(session, state.agent, state.blocks, state.messages[0])
            return len(state.messages)

        rows = 0
        for _ in range(50):  # warm: prepared statements, SQLAlchemy's caches
            rows = await load()
        for run in range(1, runs + 1):
            assert bench.pg_data is not None
            pg_before, cpu_before = postgres_cpu_s(bench.pg_data), time.process_time()
            for _ in range(loads):
                await load()
            cpu = (time.process_time() - cpu_before) * 1000 / loads
            pg = (postgres_cpu_s(bench.pg_data) - pg_before) * 1000 / loads
            print(f"run {run}: load_state of {rows} in-context rows: {cpu:.3f} ms CPU + Postgres {pg:.3f} ms")
    await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=100)
    parser.add_argument("--loads", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=60) as http:
        agent_id = http.post("/v1/agents/", json={**AGENT, "name": "load-state"}).json()["id"]
        for i in range(args.sends):
            send(http, agent_id, f"hello {i}")
        asyncio.run(measure(bench, agent_id, args.loads, args.runs))


if __name__ == "__main__":
    main()
