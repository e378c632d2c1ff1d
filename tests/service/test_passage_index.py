"""The semantic search runs on the HNSW index of its dimension: EXPLAIN of the real query shows no Seq Scan.

Rows are generated straight into the table (random vectors, planner statistics by ANALYZE); no planner setting
is changed.
"""

import random

import pytest
from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db.models.passage import INDEXED_DIMS
from memlet.passages.repository import PassageFilters, PassageRepository, PassageScope, nearest_statement

ORG, ARCHIVE = "org-explain", "archive-explain"
ROWS_PER_DIM = 1000


async def seed(session: AsyncSession) -> None:
    await session.execute(text(f"INSERT INTO organizations (id, name, privileged_tools) VALUES ('{ORG}', 'x', false)"))
    await session.execute(text(f"INSERT INTO archives (id, name, organization_id) VALUES ('{ARCHIVE}', 'x', '{ORG}')"))
    for dim in INDEXED_DIMS:
        await session.execute(
            text(
                "INSERT INTO passages (id, organization_id, archive_id, text, embedding, embedding_dim) "
                f"SELECT 'passage-{dim}-' || g, '{ORG}', '{ARCHIVE}', 'row ' || g, "
                f"(SELECT array_agg(random() - 0.5) FROM generate_series(1, {dim}) d WHERE g > 0)::real[]::vector, {dim} "
                f"FROM generate_series(1, {ROWS_PER_DIM}) g"
            )
        )
    await session.execute(text("ANALYZE passages"))


def explain_sql(dim: int) -> str:
    vector = [random.uniform(-1, 1) for _ in range(dim)]
    stmt = nearest_statement(ORG, PassageScope(archive_ids=[ARCHIVE]), PassageFilters(), vector, 10)
    return "EXPLAIN " + str(stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


@pytest.mark.timeout(300)
async def test_every_accepted_dimension_uses_its_hnsw_index(session: AsyncSession) -> None:
    await seed(session)
    for dim in INDEXED_DIMS:
        plan = "\n".join(row[0] for row in await session.execute(text(explain_sql(dim))))
        assert "Seq Scan" not in plan, plan
        assert f"ix_passages_embedding_{dim}" in plan, plan
    # The same query through the repository finds an exact match first, at distance 0.
    target = (await session.execute(text("SELECT embedding::text FROM passages WHERE id = 'passage-768-42'"))).scalar()
    vector = [float(x) for x in str(target).strip("[]").split(",")]
    hits = await PassageRepository(session).nearest(
        ORG, PassageScope(archive_ids=[ARCHIVE]), PassageFilters(), vector, 3
    )
    assert hits[0][0].id == "passage-768-42"
    assert hits[0][1] == pytest.approx(0.0, abs=1e-5)
    assert [h[1] for h in hits] == sorted(h[1] for h in hits)
