from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Provider(TimestampMixin, OrgScopedMixin, Base):
    """A BYOK provider created through /v1/providers (env-configured base providers are not stored)."""

    __tablename__ = "providers"
    __table_args__ = (UniqueConstraint("organization_id", "name"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    provider_type: Mapped[str] = mapped_column(String)
    provider_category: Mapped[str] = mapped_column(String, default="byok")
    api_key: Mapped[str | None] = mapped_column(Text, default=None)
    access_key: Mapped[str | None] = mapped_column(Text, default=None)
    base_url: Mapped[str | None] = mapped_column(Text, default=None)
    region: Mapped[str | None] = mapped_column(String, default=None)
    api_version: Mapped[str | None] = mapped_column(String, default=None)
    last_synced: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # The models the provider listed at its last sync ({"llm": [...], "embedding": [...]}: wire dicts), served
    # while a live listing fails.
    models: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
