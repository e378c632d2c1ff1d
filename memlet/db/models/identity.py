from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSON
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Identity(TimestampMixin, OrgScopedMixin, Base):
    __tablename__ = "identities"
    __table_args__ = (UniqueConstraint("organization_id", "identifier_key", "project_id"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    identifier_key: Mapped[str] = mapped_column(String)
    name: Mapped[str] = mapped_column(String)
    identity_type: Mapped[str] = mapped_column(String)
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    properties: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)


class IdentityAgent(Base):
    __tablename__ = "identities_agents"

    identity_id: Mapped[str] = mapped_column(String, ForeignKey("identities.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[str] = mapped_column(
        String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class IdentityBlock(Base):
    __tablename__ = "identities_blocks"

    identity_id: Mapped[str] = mapped_column(String, ForeignKey("identities.id", ondelete="CASCADE"), primary_key=True)
    block_id: Mapped[str] = mapped_column(
        String, ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True, index=True
    )
