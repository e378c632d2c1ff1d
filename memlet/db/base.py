"""Declarative base with a constraint naming convention, and the two column mixins every table uses."""

from datetime import UTC, datetime

from sqlalchemy import DateTime, ForeignKey, MetaData, String, func
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def utcnow() -> datetime:
    return datetime.now(UTC)


class TimestampMixin:
    # Set in Python (not the transaction's now()) so rows made in one transaction keep their creation order.
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, server_default=func.now(), onupdate=utcnow
    )
    created_by_id: Mapped[str | None] = mapped_column(String, default=None)
    last_updated_by_id: Mapped[str | None] = mapped_column(String, default=None)


class OrgScopedMixin:
    @declared_attr
    def organization_id(cls) -> Mapped[str]:
        return mapped_column(String, ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
