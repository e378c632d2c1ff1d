"""Full-text search over messages: the searchable text of a message as one IMMUTABLE SQL function, and a GIN index
on its `simple` tsvector.

`memlet_message_text(role, content, tool_calls)` is what search matches: the text parts of a user, assistant or
tool message plus the arguments of its tool calls (a V2 agent's `send_message` text lives there). Other roles
(the system prompt, rewritten on every memory edit) give '' so the index never holds them. The `simple`
configuration (no stemming, no stop words) works for any language; queries match word prefixes.

Revision ID: 2026_11_23_message_search
Revises: 2026_11_23_mcp_servers
Create Date: 2026-11-23 14:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_23_message_search"
down_revision: str | None = "2026_11_23_mcp_servers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT_FUNCTION = """
CREATE OR REPLACE FUNCTION memlet_message_text(role text, content jsonb, tool_calls jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN role IN ('user', 'assistant', 'tool') THEN
    concat_ws(' ',
      (SELECT string_agg(part->>'text', ' ')
         FROM jsonb_array_elements(CASE WHEN jsonb_typeof(content) = 'array' THEN content ELSE '[]'::jsonb END)
              AS part),
      (SELECT string_agg(call->'function'->>'arguments', ' ')
         FROM jsonb_array_elements(CASE WHEN jsonb_typeof(tool_calls) = 'array' THEN tool_calls ELSE '[]'::jsonb END)
              AS call))
  ELSE '' END
$$
"""


def upgrade() -> None:
    op.execute(_TEXT_FUNCTION)
    op.execute(
        "CREATE INDEX ix_messages_search_tsv ON messages "
        "USING gin (to_tsvector('simple'::regconfig, memlet_message_text(role, content, tool_calls)))"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_messages_search_tsv")
    op.execute("DROP FUNCTION IF EXISTS memlet_message_text(text, jsonb, jsonb)")
