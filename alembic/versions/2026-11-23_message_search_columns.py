"""Messages store what search matches: generated columns `search_text` (`memlet_message_text(role, content,
tool_calls)`) and `search_tsv` (its `simple` tsvector), with the GIN index on `search_tsv`.

The index `ix_messages_search_tsv` was on the expression `to_tsvector('simple', memlet_message_text(...))`: every
row a full-text search ranked (`ts_rank`) and every row the substring fallback read (`ILIKE`) ran the text function
over its JSONB again, so a search's cost grew with the agent's whole history (a common word at 100k messages took
~900 ms). The columns hold the same values, computed once when a row is written or its content changes.
The two columns repeat the function (a generated column cannot read another one).

Revision ID: 2026_11_23_message_search_cols
Revises: 2026_11_23_agent_list_indexes
Create Date: 2026-11-23 22:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_23_message_search_cols"
down_revision: str | None = "2026_11_23_agent_list_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = "memlet_message_text(role, content, tool_calls)"
_TSVECTOR = f"to_tsvector('simple'::regconfig, {_TEXT})"


def upgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_messages_search_tsv")
    # One ALTER TABLE: the table is rewritten once for both columns.
    op.execute(
        f"ALTER TABLE messages ADD COLUMN search_text text GENERATED ALWAYS AS ({_TEXT}) STORED, "
        f"ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS ({_TSVECTOR}) STORED"
    )
    op.execute("CREATE INDEX ix_messages_search_tsv ON messages USING gin (search_tsv)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_messages_search_tsv")
    op.execute("ALTER TABLE messages DROP COLUMN IF EXISTS search_tsv, DROP COLUMN IF EXISTS search_text")
    op.execute(f"CREATE INDEX ix_messages_search_tsv ON messages USING gin ({_TSVECTOR})")
