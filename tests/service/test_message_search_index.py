"""Message search runs on its indexes: full-text on the GIN index `ix_messages_search_tsv` over the stored column
`search_tsv` (EXPLAIN of the repository's own query on a 100k-message table), vectors on the partial HNSW index of
their dimension; the text ranking puts full-text matches (best `ts_rank` first) before substring-only matches.

Rows are generated straight into the table (planner statistics by ANALYZE); no planner setting is changed. On a
small table a scan of the stored tsvector is cheaper than the index, and the planner rightly takes it.
"""

import random

import pytest
from sqlalchemy import event, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.driver import driver_of
from memlet.messages.embedding_repository import MessageEmbeddingRepository, MessageScope, nearest_messages_statement
from memlet.messages.repository import MessageRepository, tsquery_terms

ORG, AGENT = "org-msgsearch", "agent-msgsearch"
ROWS = 20_000
LARGE = 100_000  # the scale the full-text index is for (issue 13: search at 100k messages)


async def seed(session: AsyncSession, rows: int = ROWS) -> None:
    session.add(orm.Organization(id=ORG, name="x"))
    await session.flush()
    session.add(orm.Agent(id=AGENT, name="x", organization_id=ORG, llm_config={}))
    await session.flush()
    await session.execute(
        text(
            "INSERT INTO messages (id, agent_id, organization_id, role, content) "
            f"SELECT 'message-' || g, '{AGENT}', '{ORG}', CASE WHEN g % 2 = 0 THEN 'user' ELSE 'assistant' END, "
            "jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'filler words number ' || g)) "
            f"FROM generate_series(1, {rows}) g"
        )
    )
    rows = [
        ("message-a", "user", "the zebra crossed the road"),
        ("message-b", "assistant", "zebra zebra everywhere, zebra stripes"),
        ("message-c", "user", "I saw the zebras at the zoo"),
        ("message-d", "user", "ultrazebra is a made-up word"),
    ]
    for message_id, role, body in rows:
        await session.execute(
            text(
                "INSERT INTO messages (id, agent_id, organization_id, role, content) VALUES "
                f"(:id, '{AGENT}', '{ORG}', :role, jsonb_build_array(jsonb_build_object('type', 'text', 'text', CAST(:t AS text))))"
            ),
            {"id": message_id, "role": role, "t": body},
        )
    await session.execute(text("ANALYZE messages"))


def test_tsquery_terms_match_any_word_as_a_prefix() -> None:
    assert tsquery_terms("Zebra, ZEBRA & the road!") == "zebra:* | the:* | road:*"
    assert tsquery_terms("'; DROP TABLE messages; --") == "drop:* | table:* | messages:*"
    assert tsquery_terms("!!!") == ""


@pytest.mark.timeout(300)
async def test_full_text_search_uses_the_gin_index_and_ranks(session: AsyncSession) -> None:
    await seed(session, LARGE)
    statements: list[tuple[str, tuple[object, ...]]] = []

    def capture(_conn: object, _cursor: object, statement: str, params: tuple[object, ...], *_: object) -> None:
        statements.append((statement, params))

    sync_engine = session.bind.sync_engine  # type: ignore[union-attr]
    event.listen(sync_engine, "before_cursor_execute", capture)
    try:
        rows = await MessageRepository.search_via(
            await driver_of(session),
            None,
            organization_id=ORG,
            query="zebra",
            roles=["user", "assistant"],
            start=None,
            end=None,
            limit=4,
        )
    finally:
        event.remove(sync_engine, "before_cursor_execute", capture)
    # Full-text matches best first (three "zebra"s beat one), then the substring-only "ultrazebra".
    assert [r.id for r in rows] == ["message-b", "message-c", "message-a", "message-d"]

    fts_sql, params = next((sql, params) for sql, params in statements if "@@" in sql)
    result = await session.connection()
    plan = [row[0] for row in await result.exec_driver_sql("EXPLAIN " + fts_sql, params)]
    # The full-text ranking finds its rows through the index, never by reading the table.
    fts = _section(plan, "CTE fts")
    assert any("Bitmap Index Scan on ix_messages_search_tsv" in line for line in fts), "\n".join(plan)
    assert not any("Seq Scan" in line for line in fts), "\n".join(plan)
    # The substring fallback reads the scope's rows (no index serves `ILIKE '%...%'`), so it runs only when the
    # full-text matches do not fill the limit: a one-time filter over the count of those matches.
    assert any("One-Time Filter" in line for line in plan), "\n".join(plan)


def _section(plan: list[str], head: str) -> list[str]:
    """The lines of `plan` nested under the line containing `head`."""
    start = next(i for i, line in enumerate(plan) if head in line)
    depth = len(plan[start]) - len(plan[start].lstrip())
    section = []
    for line in plan[start + 1 :]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        section.append(line)
    return section


@pytest.mark.timeout(300)
async def test_vector_search_uses_the_hnsw_index_of_its_dimension(session: AsyncSession) -> None:
    await seed(session)
    await session.execute(
        text(
            "INSERT INTO message_embeddings (message_id, agent_id, organization_id, embedding, embedding_dim, "
            "embedding_model) "
            "SELECT id, agent_id, organization_id, (SELECT array_agg(random() - 0.5) FROM generate_series(1, 256) d "
            "WHERE sequence_id > 0)::real[]::vector, 256, 'm' FROM messages "
            "WHERE sequence_id % 10 = 0 OR id IN ('message-a', 'message-b', 'message-c', 'message-d')"
        )
    )
    await session.execute(text("ANALYZE message_embeddings"))
    scope = MessageScope(roles=["user", "assistant"], agent_id=AGENT, organization_id=ORG)
    vector = [random.uniform(-1, 1) for _ in range(256)]
    stmt = nearest_messages_statement(scope, "m", vector, 10)
    sql = str(stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    plan = "\n".join(row[0] for row in await session.execute(text("EXPLAIN " + sql)))
    assert "ix_message_embeddings_256" in plan, plan
    assert "Seq Scan" not in plan, plan
    target = (
        await session.execute(text("SELECT embedding::text FROM message_embeddings WHERE message_id = 'message-b'"))
    ).scalar()
    exact = [float(x) for x in str(target).strip("[]").split(",")]
    hits = await MessageEmbeddingRepository(session).nearest(scope, "m", exact, 3)
    assert hits[0][0].id == "message-b" and hits[0][1] == pytest.approx(0.0, abs=1e-5)
