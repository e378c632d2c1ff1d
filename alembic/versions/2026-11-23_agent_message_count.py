"""agents.message_count, kept by statement-level triggers on messages, so the recall count needs no scan.

The system prompt's `<memory_metadata>` shows how many messages are out of context (every stored message of the
agent minus the in-context ones). Counting them was a scan of the agent's history on every memory edit (28 ms at
100k messages); the triggers add each INSERT's and DELETE's rows per agent in one UPDATE instead.

Revision ID: 2026_11_23_agent_message_count
Revises: 2026_11_23_queued_runs
Create Date: 2026-11-23 16:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "2026_11_23_agent_message_count"
down_revision: str | None = "2026_11_23_queued_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTERS = {
    # trigger event: (transition table, sign)
    "INSERT": ("new_rows", "+"),
    "DELETE": ("old_rows", "-"),
}


def upgrade() -> None:
    op.add_column("agents", sa.Column("message_count", sa.BigInteger(), nullable=False, server_default="0"))
    op.execute(
        "UPDATE agents a SET message_count = m.n "
        "FROM (SELECT agent_id, count(*) AS n FROM messages GROUP BY agent_id) m WHERE a.id = m.agent_id"
    )
    for event, (table, sign) in COUNTERS.items():
        name = f"messages_count_{event.lower()}"
        op.execute(
            f"""
            CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE agents a SET message_count = a.message_count {sign} c.n
                FROM (SELECT agent_id, count(*) AS n FROM {table} GROUP BY agent_id) c
                WHERE a.id = c.agent_id;
                RETURN NULL;
            END $$
            """
        )
        op.execute(
            f"CREATE TRIGGER {name} AFTER {event} ON messages REFERENCING {'NEW' if sign == '+' else 'OLD'} "
            f"TABLE AS {table} FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
        )


def downgrade() -> None:
    for event in COUNTERS:
        name = f"messages_count_{event.lower()}"
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON messages")
        op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    op.drop_column("agents", "message_count")
