"""Initial schema: organizations, users, agents, blocks, tools, messages, runs, steps, tags, identities, providers.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 04:41:22.456086
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # pgvector first: archival passages and message embeddings use it.
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "organizations",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("privileged_tools", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_organizations")),
    )
    op.create_table(
        "agents",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("agent_type", sa.String(), nullable=False),
        sa.Column("system", sa.Text(), nullable=False),
        sa.Column("llm_config", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("embedding_config", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("model_settings", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("compaction_settings", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("response_format", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("tool_rules", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("message_ids", sa.ARRAY(sa.String()), nullable=False),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("secrets", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("template_id", sa.String(), nullable=True),
        sa.Column("base_template_id", sa.String(), nullable=True),
        sa.Column("deployment_id", sa.String(), nullable=True),
        sa.Column("entity_id", sa.String(), nullable=True),
        sa.Column("message_buffer_autoclear", sa.Boolean(), nullable=False),
        sa.Column("enable_sleeptime", sa.Boolean(), nullable=True),
        sa.Column("last_run_completion", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run_duration_ms", sa.Integer(), nullable=True),
        sa.Column("last_stop_reason", sa.String(), nullable=True),
        sa.Column("timezone", sa.String(), nullable=True),
        sa.Column("max_files_open", sa.Integer(), nullable=True),
        sa.Column("per_file_view_window_char_limit", sa.Integer(), nullable=True),
        sa.Column("hidden", sa.Boolean(), nullable=True),
        sa.Column("system_compiled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_agents_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
    )
    op.create_index("ix_agents_org_created", "agents", ["organization_id", "created_at", "id"], unique=False)
    op.create_index(op.f("ix_agents_organization_id"), "agents", ["organization_id"], unique=False)
    op.create_table(
        "blocks",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("limit", sa.Integer(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("read_only", sa.Boolean(), nullable=False),
        sa.Column("hidden", sa.Boolean(), nullable=True),
        sa.Column("is_template", sa.Boolean(), nullable=False),
        sa.Column("template_name", sa.String(), nullable=True),
        sa.Column("template_id", sa.String(), nullable=True),
        sa.Column("base_template_id", sa.String(), nullable=True),
        sa.Column("deployment_id", sa.String(), nullable=True),
        sa.Column("entity_id", sa.String(), nullable=True),
        sa.Column("preserve_on_migration", sa.Boolean(), nullable=True),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("tags", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_blocks_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blocks")),
    )
    op.create_index(op.f("ix_blocks_label"), "blocks", ["label"], unique=False)
    op.create_index(op.f("ix_blocks_organization_id"), "blocks", ["organization_id"], unique=False)
    op.create_table(
        "identities",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("identifier_key", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("identity_type", sa.String(), nullable=False),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("properties", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_identities_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_identities")),
        sa.UniqueConstraint(
            "organization_id",
            "identifier_key",
            "project_id",
            name=op.f("uq_identities_organization_id_identifier_key_project_id"),
        ),
    )
    op.create_index(op.f("ix_identities_organization_id"), "identities", ["organization_id"], unique=False)
    op.create_table(
        "providers",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("provider_type", sa.String(), nullable=False),
        sa.Column("provider_category", sa.String(), nullable=False),
        sa.Column("api_key", sa.Text(), nullable=True),
        sa.Column("access_key", sa.Text(), nullable=True),
        sa.Column("base_url", sa.Text(), nullable=True),
        sa.Column("region", sa.String(), nullable=True),
        sa.Column("api_version", sa.String(), nullable=True),
        sa.Column("last_synced", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_providers_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_providers")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_providers_organization_id_name")),
    )
    op.create_index(op.f("ix_providers_organization_id"), "providers", ["organization_id"], unique=False)
    op.create_table(
        "tools",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("tool_type", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("source_type", sa.String(), nullable=True),
        sa.Column("source_code", sa.Text(), nullable=True),
        sa.Column("json_schema", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("args_json_schema", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("return_char_limit", sa.Integer(), nullable=False),
        sa.Column("tags", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("pip_requirements", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("npm_requirements", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("default_requires_approval", sa.Boolean(), nullable=True),
        sa.Column("enable_parallel_execution", sa.Boolean(), nullable=True),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_tools_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tools")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_tools_organization_id_name")),
    )
    op.create_index(op.f("ix_tools_organization_id"), "tools", ["organization_id"], unique=False)
    op.create_table(
        "users",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_users_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_table(
        "agents_tags",
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tag", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_agents_tags_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("agent_id", "tag", name=op.f("pk_agents_tags")),
    )
    op.create_index(op.f("ix_agents_tags_tag"), "agents_tags", ["tag"], unique=False)
    op.create_table(
        "blocks_agents",
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("block_id", sa.String(), nullable=False),
        sa.Column("block_label", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_blocks_agents_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["block_id"], ["blocks.id"], name=op.f("fk_blocks_agents_block_id_blocks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("agent_id", "block_id", name=op.f("pk_blocks_agents")),
        sa.UniqueConstraint("agent_id", "block_label", name=op.f("uq_blocks_agents_agent_id_block_label")),
    )
    op.create_index(op.f("ix_blocks_agents_block_id"), "blocks_agents", ["block_id"], unique=False)
    op.create_table(
        "identities_agents",
        sa.Column("identity_id", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_identities_agents_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["identity_id"],
            ["identities.id"],
            name=op.f("fk_identities_agents_identity_id_identities"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("identity_id", "agent_id", name=op.f("pk_identities_agents")),
    )
    op.create_index(op.f("ix_identities_agents_agent_id"), "identities_agents", ["agent_id"], unique=False)
    op.create_table(
        "identities_blocks",
        sa.Column("identity_id", sa.String(), nullable=False),
        sa.Column("block_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["block_id"], ["blocks.id"], name=op.f("fk_identities_blocks_block_id_blocks"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["identity_id"],
            ["identities.id"],
            name=op.f("fk_identities_blocks_identity_id_identities"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("identity_id", "block_id", name=op.f("pk_identities_blocks")),
    )
    op.create_index(op.f("ix_identities_blocks_block_id"), "identities_blocks", ["block_id"], unique=False)
    op.create_table(
        "messages",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("sequence_id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("content", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("tool_calls", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("tool_call_id", sa.String(), nullable=True),
        sa.Column("tool_returns", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("step_id", sa.String(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("otid", sa.String(), nullable=True),
        sa.Column("sender_id", sa.String(), nullable=True),
        sa.Column("group_id", sa.String(), nullable=True),
        sa.Column("batch_item_id", sa.String(), nullable=True),
        sa.Column("conversation_id", sa.String(), nullable=True),
        sa.Column("is_err", sa.Boolean(), nullable=True),
        sa.Column("approval_request_id", sa.String(), nullable=True),
        sa.Column("approve", sa.Boolean(), nullable=True),
        sa.Column("denial_reason", sa.String(), nullable=True),
        sa.Column("approvals", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_messages_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_messages_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.UniqueConstraint("sequence_id", name=op.f("uq_messages_sequence_id")),
    )
    op.create_index("ix_messages_agent_seq", "messages", ["agent_id", "sequence_id"], unique=False)
    op.create_index(op.f("ix_messages_organization_id"), "messages", ["organization_id"], unique=False)
    op.create_index("ix_messages_run_seq", "messages", ["run_id", "sequence_id"], unique=False)
    op.create_index(op.f("ix_messages_step_id"), "messages", ["step_id"], unique=False)
    op.create_table(
        "runs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("stop_reason", sa.String(), nullable=True),
        sa.Column("background", sa.Boolean(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("request_config", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("callback_url", sa.Text(), nullable=True),
        sa.Column("callback_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("callback_status_code", sa.Integer(), nullable=True),
        sa.Column("callback_error", sa.Text(), nullable=True),
        sa.Column("conversation_id", sa.String(), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ttft_ns", sa.BigInteger(), nullable=True),
        sa.Column("total_duration_ns", sa.BigInteger(), nullable=True),
        sa.Column("num_steps", sa.Integer(), nullable=False),
        sa.Column("tools_used", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_runs_agent_id_agents"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_runs_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_agent_created", "runs", ["agent_id", "created_at"], unique=False)
    op.create_index(op.f("ix_runs_organization_id"), "runs", ["organization_id"], unique=False)
    op.create_index(op.f("ix_runs_status"), "runs", ["status"], unique=False)
    op.create_table(
        "tools_agents",
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tool_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_tools_agents_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["tool_id"], ["tools.id"], name=op.f("fk_tools_agents_tool_id_tools"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("agent_id", "tool_id", name=op.f("pk_tools_agents")),
    )
    op.create_index(op.f("ix_tools_agents_tool_id"), "tools_agents", ["tool_id"], unique=False)
    op.create_table(
        "steps",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("provider_name", sa.String(), nullable=True),
        sa.Column("provider_category", sa.String(), nullable=True),
        sa.Column("provider_id", sa.String(), nullable=True),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("model_handle", sa.String(), nullable=True),
        sa.Column("model_endpoint", sa.String(), nullable=True),
        sa.Column("context_window_limit", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("total_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_input_tokens", sa.Integer(), nullable=True),
        sa.Column("reasoning_tokens", sa.Integer(), nullable=True),
        sa.Column("stop_reason", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("error_type", sa.String(), nullable=True),
        sa.Column("error_data", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("feedback", sa.String(), nullable=True),
        sa.Column("tags", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("trace_id", sa.String(), nullable=True),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("step_metrics", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_steps_agent_id_agents"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_steps_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_steps_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
    )
    op.create_index(op.f("ix_steps_organization_id"), "steps", ["organization_id"], unique=False)
    op.create_index("ix_steps_run_created", "steps", ["run_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_steps_run_created", table_name="steps")
    op.drop_index(op.f("ix_steps_organization_id"), table_name="steps")
    op.drop_table("steps")
    op.drop_index(op.f("ix_tools_agents_tool_id"), table_name="tools_agents")
    op.drop_table("tools_agents")
    op.drop_index(op.f("ix_runs_status"), table_name="runs")
    op.drop_index(op.f("ix_runs_organization_id"), table_name="runs")
    op.drop_index("ix_runs_agent_created", table_name="runs")
    op.drop_table("runs")
    op.drop_index(op.f("ix_messages_step_id"), table_name="messages")
    op.drop_index("ix_messages_run_seq", table_name="messages")
    op.drop_index(op.f("ix_messages_organization_id"), table_name="messages")
    op.drop_index("ix_messages_agent_seq", table_name="messages")
    op.drop_table("messages")
    op.drop_index(op.f("ix_identities_blocks_block_id"), table_name="identities_blocks")
    op.drop_table("identities_blocks")
    op.drop_index(op.f("ix_identities_agents_agent_id"), table_name="identities_agents")
    op.drop_table("identities_agents")
    op.drop_index(op.f("ix_blocks_agents_block_id"), table_name="blocks_agents")
    op.drop_table("blocks_agents")
    op.drop_index(op.f("ix_agents_tags_tag"), table_name="agents_tags")
    op.drop_table("agents_tags")
    op.drop_table("users")
    op.drop_index(op.f("ix_tools_organization_id"), table_name="tools")
    op.drop_table("tools")
    op.drop_index(op.f("ix_providers_organization_id"), table_name="providers")
    op.drop_table("providers")
    op.drop_index(op.f("ix_identities_organization_id"), table_name="identities")
    op.drop_table("identities")
    op.drop_index(op.f("ix_blocks_organization_id"), table_name="blocks")
    op.drop_index(op.f("ix_blocks_label"), table_name="blocks")
    op.drop_table("blocks")
    op.drop_index(op.f("ix_agents_organization_id"), table_name="agents")
    op.drop_index("ix_agents_org_created", table_name="agents")
    op.drop_table("agents")
    op.drop_table("organizations")
