"""`memlet_message_text` in PL/pgSQL: the same text, without planning its body again for every statement.

Postgres cannot inline a SQL function whose body has subqueries, so the SQL version was parsed and planned anew in
every statement that computed it: each INSERT of messages and each UPDATE of a message row, twice (the generated
columns `search_text` and `search_tsv` each call it). That was ~0.15 ms of Postgres CPU per statement, a third of a
one-row insert's. PL/pgSQL keeps its plans for the session, and returns '' for other roles (the system prompt, which
every memory edit rewrites) before it reads anything. The body's SELECTs are the SQL version's, so every stored
value stays what the function gives: nothing is recomputed.

Revision ID: 2026_11_28_message_text_plpgsql
Revises: 2026_11_24_window_storage
Create Date: 2026-11-28 15:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_28_message_text_plpgsql"
down_revision: str | None = "2026_11_24_window_storage"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The text parts of the content, then the arguments of the tool calls (NULLs skipped, '' when there is neither).
_PARTS = """
    concat_ws(' ',
      (SELECT string_agg(part->>'text', ' ')
         FROM jsonb_array_elements(CASE WHEN jsonb_typeof(content) = 'array' THEN content ELSE '[]'::jsonb END)
              AS part),
      (SELECT string_agg(call->'function'->>'arguments', ' ')
         FROM jsonb_array_elements(CASE WHEN jsonb_typeof(tool_calls) = 'array' THEN tool_calls ELSE '[]'::jsonb END)
              AS call))
"""

_SIGNATURE = "memlet_message_text(role text, content jsonb, tool_calls jsonb) RETURNS text"


def upgrade() -> None:
    op.execute(
        f"""
        CREATE OR REPLACE FUNCTION {_SIGNATURE}
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        BEGIN
          IF role IS NULL OR role NOT IN ('user', 'assistant', 'tool') THEN
            RETURN '';
          END IF;
          RETURN {_PARTS};
        END
        $$
        """
    )


def downgrade() -> None:
    op.execute(
        f"""
        CREATE OR REPLACE FUNCTION {_SIGNATURE}
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT CASE WHEN role IN ('user', 'assistant', 'tool') THEN {_PARTS} ELSE '' END
        $$
        """
    )
