"""Archival memory: insert latency and batch throughput, and semantic search latency at 2k, 100k and 1M passages,
against a memlet server process (mock embeddings: the project's mock LLM, hashed bag-of-words vectors).

    .venv/bin/python bench/bench_archival.py [--inserts 200] [--searches 100] [--sizes 2000,100000,1000000]

Numbers are printed, never asserted. Phases:
1. insert: `POST /v1/agents/{id}/archival-memory`, one passage per request, sequential (text-embedding-3-small,
   1536 dimensions, as Letta's baseline); then `POST /v1/archives/{id}/passages/batch` with 100 passages a request.
2. search at 2k (1536 dimensions, the baseline's workload): `GET .../archival-memory/search?top_k=10`.
3. search at each size of `--sizes` on a 256-dimension agent: the passages beyond the first 2k are generated straight
   into the table with SQL (random unit vectors), then the dimension's HNSW index is rebuilt (faster than
   inserting into it row by row) and the table analyzed. EXPLAIN of the repository's own statement shows the index.

Letta 0.16.8 on the same kind of machine (../shared/letta/baseline.md): archival insert p50 269.7 ms / p99 388.0 ms
(3.6 /s); semantic search at 2,000 passages p50 312.3 ms / p99 431.6 ms. Letta had no index and has no number at
100k or 1M.
"""

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import bench_server, summary
from memlet.db.engine import async_url
from memlet.passages.repository import PassageFilters, PassageScope, nearest_statement

WORDS = [
    *("river", "mountain", "budget", "meeting", "coffee", "garden", "launch", "invoice", "travel", "weather"),
    *("python", "database", "kitchen", "music", "holiday", "printer", "contract", "battery", "window", "sister"),
    *("doctor", "ticket", "museum", "harbour", "winter"),
]
_VECTOR = re.compile(r"\[[-0-9.,e]+\]")
LETTA = {"insert": (269.7, 388.0), "search_2k": (312.3, 431.6)}


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def quantiles(seconds: list[float]) -> tuple[float, float, float]:
    ms = sorted(s * 1000 for s in seconds)
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return q[49], q[94], q[98]


def make_agent(http: httpx.Client, name: str, dim: int) -> str:
    config = {
        "embedding_endpoint_type": "openai",
        "embedding_model": "text-embedding-3-small",
        "embedding_dim": dim,
        "embedding_chunk_size": 300,
    }
    body = {"name": name, "model": "openai/gpt-4o-mini", "embedding_config": config}
    response = http.post("/v1/agents/", json=body)
    response.raise_for_status()
    return str(response.json()["id"])


def timed_searches(http: httpx.Client, agent_id: str, n: int, rng: random.Random) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        response = http.get(
            f"/v1/agents/{agent_id}/archival-memory/search", params={"query": sentence(rng, 4), "top_k": 10}
        )
        times.append(time.perf_counter() - started)
        response.raise_for_status()
        assert response.json()["count"] == 10
    return times


def phase_insert(http: httpx.Client, agent_id: str, n: int, rng: random.Random) -> str:
    times = []
    archive_id = ""
    for _ in range(n):
        started = time.perf_counter()
        response = http.post(f"/v1/agents/{agent_id}/archival-memory", json={"text": sentence(rng)})
        times.append(time.perf_counter() - started)
        response.raise_for_status()
        archive_id = response.json()[0]["archive_id"]
    p50 = quantiles(times)[0]
    print(summary("archival insert, sequential (1536 dims)", times), f"  {n / sum(times):7.1f} /s")
    print(f"{'':<44} Letta: p50={LETTA['insert'][0]:8.2f} ms  p99={LETTA['insert'][1]:8.2f} ms      3.6 /s")
    print(f"{'':<44} -> {LETTA['insert'][0] / p50:.0f}x Letta at p50")
    return archive_id


def phase_batches(http: httpx.Client, archive_id: str, total: int, rng: random.Random) -> None:
    batch, times = 100, []
    for _ in range(max(0, total) // batch):
        body = {"passages": [{"text": sentence(rng)} for _ in range(batch)]}
        started = time.perf_counter()
        http.post(f"/v1/archives/{archive_id}/passages/batch", json=body).raise_for_status()
        times.append(time.perf_counter() - started)
    if times:
        p50, _, _ = quantiles(times) if len(times) > 1 else (times[0] * 1000,) * 3
        print(
            f"{'archival insert, batches of 100':<44} n={len(times):<5} p50={p50:8.2f} ms/batch  "
            f"{batch * len(times) / sum(times):7.1f} passages/s"
        )


async def generate(uri: str, archive_id: str, org_id: str, dim: int, target: int) -> tuple[int, float, float]:
    """Fill the archive with random unit vectors of `dim` up to `target` rows; rebuild the index. Seconds spent."""
    engine = create_async_engine(async_url(uri))
    try:
        async with engine.begin() as conn:
            have = int(
                (
                    await conn.execute(text("SELECT count(*) FROM passages WHERE embedding_dim = :d"), {"d": dim})
                ).scalar_one()
            )
            await conn.execute(text(f"DROP INDEX IF EXISTS ix_passages_embedding_{dim}"))
        started, chunk = time.perf_counter(), 100_000
        while have < target:
            step = min(chunk, target - have)
            async with engine.begin() as conn:
                await conn.execute(
                    text(
                        "INSERT INTO passages (id, organization_id, archive_id, text, embedding, embedding_dim, tags) "
                        f"SELECT 'passage-gen-' || (g + {have}), '{org_id}', '{archive_id}', 'generated row ' || g, "
                        "(SELECT array_agg(v / n) FROM (SELECT v, sqrt(sum(v * v) OVER ()) AS n FROM "
                        f"(SELECT random() - 0.5 AS v FROM generate_series(1, {dim}) WHERE g > 0) s) t)::real[]::vector, "
                        f"{dim}, '{{}}' FROM generate_series(1, {step}) g"
                    )
                )
            have += step
            print(f"    generated {have:>9,} rows ({time.perf_counter() - started:6.1f} s)", flush=True)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        async with engine.begin() as conn:
            await conn.execute(text("SET LOCAL maintenance_work_mem = '2GB'"))
            await conn.execute(
                text(
                    f"CREATE INDEX ix_passages_embedding_{dim} ON passages "
                    f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
                )
            )
        async with engine.connect() as conn:
            await conn.execute(text("ANALYZE passages"))
            await conn.commit()
        return have, loaded, time.perf_counter() - started
    finally:
        await engine.dispose()


async def explain(uri: str, archive_id: str, org_id: str, dim: int) -> str:
    vector = [random.uniform(-1, 1) for _ in range(dim)]
    stmt = nearest_statement(org_id, PassageScope(archive_ids=[archive_id]), PassageFilters(), vector, 10)
    sql = str(stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    engine = create_async_engine(async_url(uri))
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(text("EXPLAIN " + sql))
            return "\n".join(f"      {_VECTOR.sub('[...]', row[0])}" for row in rows)
    finally:
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inserts", type=int, default=200)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--sizes", default="2000,100000,1000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rng = random.Random(7)
    with bench_server() as bench, httpx.Client(base_url=bench.base_url, timeout=120) as http:
        floor = []
        for _ in range(50):  # the machine's floor: a request that touches neither the database nor a model
            started = time.perf_counter()
            http.get("/v1/health/").raise_for_status()
            floor.append(time.perf_counter() - started)
        print(summary("floor: GET /v1/health/", floor), f"  (load average {os.getloadavg()[0]:.1f})")
        print("== insert (Letta baseline workload) ==")
        agent_id = make_agent(http, "bench-1536", 1536)
        archive_id = phase_insert(http, agent_id, args.inserts, rng)
        phase_batches(http, archive_id, 2000 - args.inserts, rng)
        print("== semantic search, 2,000 passages, 1536 dims ==")
        times = timed_searches(http, agent_id, args.searches, rng)
        print(summary("search top_k=10, 2k passages (1536 dims)", times))
        print(f"{'':<44} Letta: p50={LETTA['search_2k'][0]:8.2f} ms  p99={LETTA['search_2k'][1]:8.2f} ms")
        print(f"{'':<44} -> {LETTA['search_2k'][0] / quantiles(times)[0]:.0f}x Letta at p50")

        print("== semantic search by size, 256 dims ==")
        small = make_agent(http, "bench-256", 256)
        first = http.post(f"/v1/agents/{small}/archival-memory", json={"text": sentence(rng)}).json()[0]
        small_archive = first["archive_id"]
        org_id = asyncio.run(_org_of(bench.pg_uri, small_archive))
        for size in sizes:
            try:
                have, loaded, indexed = asyncio.run(generate(bench.pg_uri, small_archive, org_id, 256, size))
            except KeyboardInterrupt:
                print(f"    stopped while generating {size:,} rows")
                break
            print(f"  {have:,} passages: generated in {loaded:.1f} s, HNSW index built in {indexed:.1f} s")
            print(asyncio.run(explain(bench.pg_uri, small_archive, org_id, 256)))
            times = timed_searches(http, small, args.searches, rng)
            p50, p95, p99 = quantiles(times)
            print(
                f"{f'search top_k=10, {have:,} passages':<44} n={len(times):<5} p50={p50:8.2f} ms  p95={p95:8.2f} ms  p99={p99:8.2f} ms"
            )


async def _org_of(uri: str, archive_id: str) -> str:
    engine = create_async_engine(async_url(uri))
    try:
        async with engine.connect() as conn:
            found = await conn.execute(text("SELECT organization_id FROM archives WHERE id = :a"), {"a": archive_id})
            return str(found.scalar_one())
    finally:
        await engine.dispose()


if __name__ == "__main__":
    main()
