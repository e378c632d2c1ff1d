"""``/v1/tools``: create, upsert, list, count, search, retrieve, modify, delete, add-base-tools, run from source."""

from dataclasses import replace
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Header, Query

from memlet.api.deps import ActorDep, SettingsDep
from memlet.api.validators import page_query
from memlet.db.pagination import Page
from memlet.errors import BadRequestError
from memlet.ids import ToolId
from memlet.messages.schemas import ToolReturnMessage
from memlet.tools import service as tool_service
from memlet.tools.base_tools import BASE_TOOLS
from memlet.tools.deps import ToolServiceDep
from memlet.tools.repository import ToolFilters
from memlet.tools.schemas import (
    Tool,
    ToolCreate,
    ToolRunFromSource,
    ToolSearchRequest,
    ToolSearchResult,
    ToolType,
    ToolUpdate,
)

router = APIRouter(prefix="/tools", tags=["tools"])

_TOOL_TYPES: tuple[str, ...] = get_args(ToolType)
ListQuery = Annotated[list[str] | None, Query()]
# Letta's project scope: a tool made with it belongs to the project; a listing or count with it sees the project's
# tools and the global ones (made without it).
ProjectIdHeader = Annotated[str | None, Header(alias="X-Project-Id")]


def split_values(values: list[str] | None) -> list[str] | None:
    """Repeated params and comma-separated values alike; nothing left means no filter."""
    if values is None:
        return None
    flat = [part.strip() for item in values for part in item.split(",") if part.strip()]
    return flat or None


def tool_types_param(values: list[str] | None) -> list[str] | None:
    types = split_values(values)
    for tool_type in types or []:
        if tool_type not in _TOOL_TYPES:
            raise BadRequestError(f"Invalid tool_type '{tool_type}'. Must be one of: {', '.join(_TOOL_TYPES)}")
    return types


def tool_filters(
    name: str | None = None,
    names: ListQuery = None,
    tool_ids: ListQuery = None,
    search: str | None = None,
    tool_types: ListQuery = None,
    exclude_tool_types: ListQuery = None,
    return_only_letta_tools: bool | None = False,
    project_id: ProjectIdHeader = None,
) -> ToolFilters:
    all_names = [*([name] if name is not None else []), *(names or [])]
    return ToolFilters(
        names=all_names or None,
        tool_ids=split_values(tool_ids),
        search=search,
        tool_types=tool_types_param(tool_types),
        exclude_tool_types=tool_types_param(exclude_tool_types),
        return_only_letta_tools=bool(return_only_letta_tools),
        project_id=project_id,
    )


def count_filters(
    filters: Annotated[ToolFilters, Depends(tool_filters)], exclude_letta_tools: bool | None = False
) -> ToolFilters:
    """The list's filters and `exclude_letta_tools`, which only the count takes (Letta's list has no such filter)."""
    return replace(filters, exclude_names=list(BASE_TOOLS) if exclude_letta_tools else None)


FiltersDep = Annotated[ToolFilters, Depends(tool_filters)]
CountFiltersDep = Annotated[ToolFilters, Depends(count_filters)]


@router.get("/", operation_id="list_tools", response_model=list[Tool])
async def list_tools(
    *,
    service: ToolServiceDep,
    actor: ActorDep,
    filters: FiltersDep,
    page: Annotated[Page, page_query()],
) -> Any:
    """List the organization's tools, newest first by default, with filters and cursor pagination."""
    return await service.list_tools(actor, filters, page)


@router.post("/", operation_id="create_tool", response_model=Tool)
async def create_tool(
    body: ToolCreate, service: ToolServiceDep, actor: ActorDep, project_id: ProjectIdHeader = None
) -> Any:
    """Create a tool from Python source (schema derived from its signature and docstring) or a given schema."""
    return await service.create(actor, body, project_id=project_id)


@router.put("/", operation_id="upsert_tool", response_model=Tool)
async def upsert_tool(
    body: ToolCreate, service: ToolServiceDep, actor: ActorDep, project_id: ProjectIdHeader = None
) -> Any:
    """Create a tool, or replace the organization's tool of the same name."""
    return await service.upsert(actor, body, project_id=project_id)


@router.get("/count", operation_id="count_tools", response_model=int)
async def count_tools(service: ToolServiceDep, actor: ActorDep, filters: CountFiltersDep) -> Any:
    """Count the tools matching the filters."""
    return await service.count(actor, filters)


@router.post("/add-base-tools", operation_id="add_base_tools", response_model=list[Tool])
async def add_base_tools(service: ToolServiceDep, actor: ActorDep) -> Any:
    """Create or refresh Letta's built-in tools in the organization."""
    return await service.add_base_tools(actor)


@router.post("/run", operation_id="run_tool_from_source", response_model=ToolReturnMessage)
async def run_tool_from_source(body: ToolRunFromSource, settings: SettingsDep, _actor: ActorDep) -> Any:
    """Run tool source code once on the given arguments, without saving a tool."""
    return await tool_service.run_from_source(body, settings)


@router.post("/search", operation_id="search_tools", response_model=list[ToolSearchResult])
async def search_tools(body: ToolSearchRequest, service: ToolServiceDep, actor: ActorDep) -> Any:
    """Find tools whose name, description or tags match the query (text search in every search_mode)."""
    return await service.search(actor, body)


@router.get("/{tool_id}", operation_id="retrieve_tool", response_model=Tool)
async def retrieve_tool(tool_id: ToolId, service: ToolServiceDep, actor: ActorDep) -> Any:
    """Get a tool by id."""
    return await service.get(actor, tool_id)


@router.patch("/{tool_id}", operation_id="modify_tool", response_model=Tool)
async def modify_tool(tool_id: ToolId, body: ToolUpdate, service: ToolServiceDep, actor: ActorDep) -> Any:
    """Update a tool; new source code re-derives the schema of a custom Python tool."""
    return await service.update(actor, tool_id, body)


@router.delete("/{tool_id}", operation_id="delete_tool")
async def delete_tool(tool_id: ToolId, service: ToolServiceDep, actor: ActorDep) -> Any:
    """Delete a tool; it is detached from every agent."""
    await service.delete(actor, tool_id)
    return None
