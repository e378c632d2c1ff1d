"""Letta's built-in tools exist in the default organization from start-up, as in Letta.

`ensure_base_tools(app)` has the `memlet.app.StartupHook` shape. It runs from the tools router's lifespan, which
FastAPI enters right after the app's own lifespan (engine and default org ready): registering it in
`memlet.app.STARTUP_HOOKS` from here would import `memlet.app` while `memlet.app` is still importing the routers.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
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


async def ensure_base_tools(app: FastAPI) -> None:
    """Start-up hook: the default org's built-in tools, refreshed to this version's schemas."""
    async with app.state.sessionmaker() as session, session.begin():
        await upsert_base_tools(session, ids.DEFAULT_ORG_ID, ids.DEFAULT_USER_ID)


@asynccontextmanager
async def base_tools_lifespan(app: FastAPI) -> AsyncIterator[None]:
    await ensure_base_tools(app)
    yield
