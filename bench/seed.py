"""Seeding a bench database in bulk with SQL (100k rows in seconds, not through the API).

``copy_agents`` clones an agent made through the API (with its block and tool links); ``add_history`` appends
plain user/assistant messages to an agent's stored history (outside its context window, as after compaction).
"""

import asyncio
from typing import Any

import asyncpg

COPIED = (
    "SELECT column_name FROM information_schema.columns "
    "WHERE table_name = 'agents' AND column_name NOT IN ('id', 'name', 'created_at', 'updated_at', 'message_count')"
)


def _run(pg_uri: str, work: Any) -> Any:
    async def go() -> Any:
        conn = await asyncpg.connect(pg_uri)
        try:
            return await work(conn)
        finally:
            await conn.close()

    return asyncio.run(go())


def add_history(pg_uri: str, agent_id: str, count: int) -> None:
    async def work(conn: asyncpg.Connection) -> None:
        await conn.execute(
            """
            INSERT INTO messages (id, organization_id, agent_id, role, content, created_at, updated_at)
            SELECT 'message-' || gen_random_uuid(), a.organization_id, a.id,
                   CASE WHEN g % 2 = 0 THEN 'user' ELSE 'assistant' END,
                   jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'seeded message number ' || g)),
                   now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
            FROM agents a, generate_series(1, $2::int) g WHERE a.id = $1
            """,
            agent_id,
            count,
        )
        await conn.execute("ANALYZE messages")

    _run(pg_uri, work)


def copy_agents(pg_uri: str, template_id: str, count: int) -> None:
    async def work(conn: asyncpg.Connection) -> None:
        columns = ", ".join(f'"{r[0]}"' for r in await conn.fetch(COPIED))
        async with conn.transaction():
            await conn.execute(
                "CREATE TEMP TABLE copies ON COMMIT DROP AS "
                f"SELECT 'agent-' || gen_random_uuid() AS id, g FROM generate_series(1, {int(count)}) g"
            )
            await conn.execute(
                f"""
                INSERT INTO agents (id, name, created_at, updated_at, {columns})
                SELECT c.id, 'copy-' || c.g, now() - make_interval(secs => c.g), now(), {columns}
                FROM copies c, agents t WHERE t.id = $1
                """,
                template_id,
            )
            for table, link_columns in (
                ("blocks_agents", ("block_id", "block_label", "position")),
                ("tools_agents", ("tool_id", "position")),
            ):
                listed = ", ".join(link_columns)
                from_link = ", ".join(f"l.{c}" for c in link_columns)
                await conn.execute(
                    f"INSERT INTO {table} (agent_id, {listed}) "
                    f"SELECT c.id, {from_link} FROM copies c, {table} l WHERE l.agent_id = $1",
                    template_id,
                )
        await conn.execute("ANALYZE agents; ANALYZE blocks_agents; ANALYZE tools_agents")

    _run(pg_uri, work)
