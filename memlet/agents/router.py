"""``/v1/agents``: create, list, count, retrieve, modify, delete."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response

from memlet.agents.deps import AgentReaderDep, AgentServiceDep
from memlet.agents.list_filters import AgentFilters
from memlet.agents.schemas import AgentRelationship, AgentState, CreateAgent, UpdateAgent
from memlet.agents.views import parse_include
from memlet.api.clients import is_fern_sdk, is_sdk_v1
from memlet.api.deps import ActorDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.ids import AgentId
from memlet.messages.schemas import StopReasonType

router = APIRouter(prefix="/agents", tags=["agents"])


async def agent_filters(
    name: str | None = None,
    tags: Annotated[list[str] | None, Query()] = None,
    match_all_tags: bool = False,
    query_text: str | None = None,
    project_id: str | None = None,
    template_id: str | None = None,
    base_template_id: str | None = None,
    identity_id: str | None = None,
    identifier_keys: Annotated[list[str] | None, Query()] = None,
    last_stop_reason: StopReasonType | None = None,
    created_by_id: str | None = None,
    # Letta's unlisted switch: hidden agents (subagents, `hidden: true`) are left out unless it is set.
    show_hidden_agents: Annotated[bool | None, Query(include_in_schema=False)] = False,
) -> AgentFilters:
    return AgentFilters(
        name=name,
        tags=tags,
        match_all_tags=match_all_tags,
        query_text=query_text,
        project_id=project_id,
        template_id=template_id,
        base_template_id=base_template_id,
        identity_id=identity_id,
        identifier_keys=identifier_keys,
        last_stop_reason=last_stop_reason,
        created_by_id=created_by_id,
        exclude_hidden=not show_hidden_agents,
    )


FiltersDep = Annotated[AgentFilters, Depends(agent_filters)]
IncludeQuery = Annotated[list[AgentRelationship] | None, Query()]
LegacyIncludeQuery = Annotated[list[str] | None, Query(deprecated=True)]


@router.get("/", operation_id="list_agents", response_model=list[AgentState])
async def list_agents(
    request: Request,
    service: AgentReaderDep,
    actor: ActorDep,
    filters: FiltersDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 50,
    include_relationships: LegacyIncludeQuery = None,
    include: IncludeQuery = None,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at", "updated_at", "last_run_completion"] = "created_at",
    ascending: Annotated[bool, Query(deprecated=True)] = False,
    sort_by: Annotated[str | None, Query(deprecated=True)] = "created_at",
) -> Any:
    """List agents, newest first by default, with filters and cursor pagination."""
    # `order` always has a value, so Letta never reads the deprecated `ascending`; nor does memlet.
    page = Page(before=before, after=after, limit=limit, order=order)
    wanted = parse_include(include, include_relationships, sdk_v1=is_sdk_v1(request))
    # The bytes FastAPI would send for list[AgentState], with each shared tool encoded once (agents/page_json.py) and
    # each unchanged agent from the process' cache (agents/json_cache.py).
    cache = getattr(request.app.state, "agent_json_cache", None)
    # `order_by` always has a value, so Letta never reads the deprecated `sort_by`; nor does memlet.
    body = await service.list_page_json(actor, filters, page, sort_by=order_by, include=wanted, cache=cache)
    return Response(content=body, media_type="application/json")


@router.post("/", operation_id="create_agent", response_model=AgentState)
async def create_agent(body: CreateAgent, service: AgentServiceDep, actor: ActorDep) -> Any:
    """Create an agent with its memory blocks, tools, tool rules and initial messages."""
    return await service.create(actor, body)


@router.get("/count", operation_id="count_agents", response_model=int)
async def count_agents(service: AgentServiceDep, actor: ActorDep, filters: FiltersDep) -> Any:
    """Count the agents matching the filters."""
    return await service.count(actor, filters)


@router.get("/{agent_id}", operation_id="retrieve_agent", response_model=AgentState)
async def retrieve_agent(
    agent_id: AgentId,
    request: Request,
    service: AgentServiceDep,
    actor: ActorDep,
    include_relationships: LegacyIncludeQuery = None,
    include: IncludeQuery = None,
) -> Any:
    """Get an agent's state."""
    wanted = parse_include(include, include_relationships, sdk_v1=is_sdk_v1(request))
    if include_relationships is None and is_fern_sdk(request):
        # As Letta, the pre-1.0 SDK reads an agent with its secrets: its programs merge them into the modify that
        # replaces them all (letta-telegram), and without them would drop every other secret the agent has.
        wanted |= {"agent.secrets"}
    return await service.get_state(actor, agent_id, wanted)


@router.patch("/{agent_id}", operation_id="modify_agent", response_model=AgentState)
async def modify_agent(agent_id: AgentId, body: UpdateAgent, service: AgentServiceDep, actor: ActorDep) -> Any:
    """Update an agent: fields, model, tools, blocks, tags, rules."""
    return await service.update(actor, agent_id, body)


@router.delete("/{agent_id}", operation_id="delete_agent")
async def delete_agent(request: Request, agent_id: AgentId, service: AgentServiceDep, actor: ActorDep) -> Any:
    """Delete an agent with its links and messages; shared blocks and tools survive."""
    await service.delete(actor, agent_id)
    # This process' caches drop what they keep of it (the agent's JSON, its threads' rows) at once; other processes'
    # entries are never read again and age out.
    state = request.app.state
    for cache in (getattr(state, "agent_json_cache", None), getattr(state, "window_cache", None)):
        if cache is not None:
            cache.forget_agent(agent_id)
    return {"message": f"Agent id={agent_id} successfully deleted"}
