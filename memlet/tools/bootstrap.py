"""Letta's built-in tools exist in the default organization from start-up, as in Letta.

`memlet.app.lifespan` calls `upsert_base_tools` for the default organization at start-up.
"""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm
from memlet.tools.base_tools import BASE_TOOLS
from memlet.tools.repository import ToolRepository


def base_tool_rows(org_id: str, user_id: str) -> list[dict[str, Any]]:
    """Insert values for every built-in tool of an org; ids are only used for tools not stored yet."""
    return [
        {
            **spec.to_tool_fields(),
            "id": ids.new_id(ids.Prefix.TOOL),
            "organization_id": org_id,
            "created_by_id": user_id,
            "last_updated_by_id": user_id,
        }
        for spec in BASE_TOOLS.values()
    ]


async def upsert_base_tools(session: AsyncSession, org_id: str, user_id: str) -> list[orm.Tool]:
    """Create or refresh the built-in tools of an org in one statement (idempotent)."""
    return await ToolRepository(session).upsert_many(base_tool_rows(org_id, user_id))
