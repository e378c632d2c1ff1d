"""Rows every server needs before its first request: the default organization and user (Letta's well-known ids)."""

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm


async def ensure_defaults(session: AsyncSession) -> None:
    """Idempotent: safe when several workers or hosts start at once."""
    await session.execute(
        insert(orm.Organization)
        .values(id=ids.DEFAULT_ORG_ID, name=ids.DEFAULT_ORG_NAME, privileged_tools=False)
        .on_conflict_do_nothing()
    )
    await session.execute(
        insert(orm.User)
        .values(id=ids.DEFAULT_USER_ID, organization_id=ids.DEFAULT_ORG_ID, name=ids.DEFAULT_USER_NAME)
        .on_conflict_do_nothing()
    )
