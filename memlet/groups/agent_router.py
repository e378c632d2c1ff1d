"""``GET /v1/agents/{agent_id}/groups``: the groups an agent takes part in."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memlet.api.validators import page_query
from memlet.db.pagination import Page
from memlet.groups.deps import GroupServiceDep
from memlet.groups.repository import GroupFilters
from memlet.groups.schemas import Group
from memlet.ids import AgentId

router = APIRouter(prefix="/agents", tags=["agents"])


@router.get("/{agent_id}/groups", operation_id="list_groups_for_agent", response_model=list[Group])
async def list_groups_for_agent(
    agent_id: AgentId,
    service: GroupServiceDep,
    page: Annotated[Page, page_query(limit=100, order="desc")],
    manager_type: Annotated[str | None, Query(description="Manager type to filter groups by")] = None,
) -> Any:
    """List the groups the agent takes part in (not those it only manages), newest first by default."""
    return await service.list_for_agent(agent_id, GroupFilters(manager_type=manager_type), page)
