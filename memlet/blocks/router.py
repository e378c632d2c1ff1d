"""``/v1/blocks``: create, list, count, retrieve, modify and delete blocks; list the agents holding one."""

from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from memlet.api.deps import ActorDep
from memlet.api.validators import Int32, Int32Query, page_query
from memlet.blocks.deps import BlockServiceDep
from memlet.blocks.repository import BlockFilters
from memlet.blocks.schemas import Block, BlockUpdate, CreateBlock
from memlet.db.pagination import Page
from memlet.ids import BlockId, Prefix, id_pattern

router = APIRouter(prefix="/blocks", tags=["blocks"])


_LABEL = r"^[a-zA-Z0-9_/-]+$"
LabelQuery = Annotated[str | None, Query(min_length=1, max_length=50, pattern=_LABEL)]
SearchQuery = Annotated[str | None, Query(min_length=1, max_length=200)]
NameQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=100, pattern=r"^[a-zA-Z0-9 _-]+$", description="Template name filter"),
]
IdentityQuery = Annotated[str | None, Query(pattern=id_pattern(Prefix.IDENTITY))]
ListQuery = Annotated[list[str] | None, Query()]
OrderQuery = Literal["asc", "desc"]


def block_filters(
    label: LabelQuery = None,
    templates_only: bool = False,
    name: NameQuery = None,
    project_id: str | None = None,
    tags: ListQuery = None,
    match_all_tags: bool = False,
) -> BlockFilters:
    return BlockFilters(
        label=label,
        templates_only=templates_only,
        template_name=name,
        project_id=project_id,
        tags=tags or (),
        match_all_tags=match_all_tags,
    )


def block_search(
    filters: Annotated[BlockFilters, Depends(block_filters)],
    identity_id: IdentityQuery = None,
    identifier_keys: ListQuery = None,
    label_search: LabelQuery = None,
    description_search: SearchQuery = None,
    value_search: SearchQuery = None,
    connected_to_agents_count_gt: Int32Query = None,
    connected_to_agents_count_lt: Int32Query = None,
    connected_to_agents_count_eq: Annotated[list[Int32] | None, Query()] = None,
    show_hidden_blocks: Annotated[bool, Query(include_in_schema=False)] = False,
) -> BlockFilters:
    return replace(
        filters,
        identity_id=identity_id,
        identifier_keys=identifier_keys or (),
        label_search=label_search,
        description_search=description_search,
        value_search=value_search,
        agents_count_gt=connected_to_agents_count_gt,
        agents_count_lt=connected_to_agents_count_lt,
        agents_count_eq=connected_to_agents_count_eq or (),
        show_hidden=show_hidden_blocks,
    )


@router.get("/", operation_id="list_blocks", response_model=list[Block])
async def list_blocks(
    *,
    service: BlockServiceDep,
    actor: ActorDep,
    filters: Annotated[BlockFilters, Depends(block_search)],
    page: Annotated[Page, page_query(order="asc")],
) -> Any:
    """List blocks, oldest first by default, with filters and cursor pagination."""
    return await service.search(actor, filters, page)


@router.post("/", operation_id="create_block", response_model=Block)
async def create_block(body: CreateBlock, service: BlockServiceDep, actor: ActorDep) -> Any:
    """Create a standalone block that agents can attach."""
    return await service.create(actor, body)


@router.get("/count", operation_id="count_blocks", response_model=int)
async def count_blocks(
    service: BlockServiceDep, actor: ActorDep, filters: Annotated[BlockFilters, Depends(block_filters)]
) -> Any:
    """Count the blocks matching the filters; hidden blocks count, and without filters templates too (as Letta)."""
    return await service.count(actor, filters)


@router.get("/{block_id}", operation_id="retrieve_block", response_model=Block)
async def retrieve_block(block_id: BlockId, service: BlockServiceDep, actor: ActorDep) -> Any:
    """Get a block by id."""
    return await service.get(actor, block_id)


@router.patch("/{block_id}", operation_id="modify_block", response_model=Block)
async def modify_block(block_id: BlockId, body: BlockUpdate, service: BlockServiceDep, actor: ActorDep) -> Any:
    """Update a block; every agent holding it sees the change."""
    return await service.modify(actor, block_id, body)


@router.delete("/{block_id}", operation_id="delete_block")
async def delete_block(block_id: BlockId, service: BlockServiceDep, actor: ActorDep) -> None:
    """Delete a block and detach it from every agent."""
    await service.delete(actor, block_id)
