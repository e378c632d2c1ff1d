"""SQL for the tag list: the union of agent tags (``agents_tags``) and block tags (``blocks.tags`` JSONB)."""

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func, select, union
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.sql import escape_like


@dataclass(frozen=True)
class TagPage:
    """Cursor pagination over tag names; ``after``/``before`` are tags, relative to ``order``."""

    before: str | None = None
    after: str | None = None
    limit: int | None = 50
    order: Literal["asc", "desc"] = "asc"


class TagRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def distinct_tags(self, org_id: str, page: TagPage, *, text: str | None = None) -> list[str]:
        """Distinct tags in code-point order (as Letta's Python ``sorted``), optionally containing ``text``."""
        agent_tags = (
            select(orm.AgentTag.tag.label("tag"))
            .join(orm.Agent, orm.Agent.id == orm.AgentTag.agent_id)
            .where(orm.Agent.organization_id == org_id)
        )
        block_tags = select(func.jsonb_array_elements_text(orm.Block.tags).label("tag")).where(
            orm.Block.organization_id == org_id, func.jsonb_typeof(orm.Block.tags) == "array"
        )
        tags = union(agent_tags, block_tags).subquery()
        # The "C" collation makes ORDER BY and the cursor comparisons agree with code-point order.
        tag = tags.c.tag.collate("C")
        stmt = select(tags.c.tag)
        if text:
            stmt = stmt.where(tags.c.tag.ilike(f"%{escape_like(text)}%", escape="\\"))
        ascending = page.order == "asc"
        if page.after is not None:
            stmt = stmt.where(tag > page.after if ascending else tag < page.after)
        if page.before is not None:
            stmt = stmt.where(tag < page.before if ascending else tag > page.before)
        # `before` alone wants the tags nearest the cursor: query the other way round, then flip the page.
        reverse = page.before is not None and page.after is None
        stmt = stmt.order_by(tag.asc() if ascending != reverse else tag.desc())
        if page.limit is not None and page.limit > 0:
            stmt = stmt.limit(page.limit)
        rows = list(await self.session.scalars(stmt))
        return rows[::-1] if reverse else rows
