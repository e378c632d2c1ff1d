from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class MCPServer(TimestampMixin, OrgScopedMixin, Base):
    """An MCP server an organization registered. Credentials are stored sealed (`memlet.crypto.Keyring`):
    `auth_token_enc` (the bearer token), `custom_headers_enc` and `env_enc` (JSON objects, sealed as one string)."""

    __tablename__ = "mcp_servers"
    __table_args__ = (UniqueConstraint("organization_id", "server_name"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    server_name: Mapped[str] = mapped_column(String)
    server_type: Mapped[str] = mapped_column(String)  # stdio | sse | streamable_http
    server_url: Mapped[str | None] = mapped_column(Text, default=None)
    command: Mapped[str | None] = mapped_column(Text, default=None)
    args: Mapped[list[str] | None] = mapped_column(JSONB, default=None)
    env_enc: Mapped[str | None] = mapped_column(Text, default=None)
    auth_header: Mapped[str | None] = mapped_column(String, default=None)
    auth_token_enc: Mapped[str | None] = mapped_column(Text, default=None)
    custom_headers_enc: Mapped[str | None] = mapped_column(Text, default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB, default=dict)


class MCPOAuthSession(TimestampMixin, OrgScopedMixin, Base):
    """One OAuth authorization attempt for an MCP server (Letta's `mcp-oauth-<hex>` rows)."""

    __tablename__ = "mcp_oauth_sessions"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    server_id: Mapped[str | None] = mapped_column(
        String, ForeignKey("mcp_servers.id", ondelete="CASCADE"), default=None, index=True
    )
    server_url: Mapped[str] = mapped_column(Text)
    server_name: Mapped[str | None] = mapped_column(String, default=None)
    state: Mapped[str] = mapped_column(String, unique=True)
    status: Mapped[str] = mapped_column(String, default="pending")  # pending | authorized | error
    authorization_url: Mapped[str | None] = mapped_column(Text, default=None)
    code_enc: Mapped[str | None] = mapped_column(Text, default=None)
    tokens_enc: Mapped[str | None] = mapped_column(Text, default=None)  # the token response, sealed JSON
    error: Mapped[str | None] = mapped_column(Text, default=None)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
