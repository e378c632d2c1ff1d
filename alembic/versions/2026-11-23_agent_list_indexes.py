"""Indexes for listing agents at 100k rows with a filter: by name, by project, by a substring of the name.

The page is ordered by (created_at, id) within the organization (`ix_agents_org_created`). With a filter that few
agents match, Postgres walked that index and checked every row against the filter (150-280 ms at 100k agents).
`name=` and `project_id=` now have an index that matches the filter and keeps the page's order. `query_text`
(`name ILIKE '%...%'`) gets a trigram index where the server offers `pg_trgm` and lets this database user create it
(the embedded Postgres has no `pg_trgm`: there a rare substring still reads every name of the organization).

Revision ID: 2026_11_23_agent_list_indexes
Revises: 2026_11_23_agent_message_count
Create Date: 2026-11-23 19:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_23_agent_list_indexes"
down_revision: str | None = "2026_11_23_agent_message_count"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_agents_org_name_created", "agents", ["organization_id", "name", "created_at", "id"])
    op.create_index("ix_agents_org_project_created", "agents", ["organization_id", "project_id", "created_at", "id"])
    op.execute(
        """
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
                CREATE INDEX ix_agents_name_trgm ON agents USING gin (name gin_trgm_ops);
            END IF;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'pg_trgm not created (%): query_text filters read every agent name', SQLERRM;
        END
        $$
        """
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_agents_name_trgm")
    op.drop_index("ix_agents_org_project_created", table_name="agents")
    op.drop_index("ix_agents_org_name_created", table_name="agents")
