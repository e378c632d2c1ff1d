"""``/v1/groups``: create, list, count, retrieve, modify and delete groups; share blocks; list and reset their
messages. Every route is deprecated in Letta 0.16.8 and kept for its clients."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query

from memlet.api.validators import PageLimit, page_query
from memlet.db.pagination import Page
from memlet.groups.deps import GroupServiceDep
from memlet.groups.repository import GroupFilters
from memlet.groups.schemas import Group, GroupCreate, GroupUpdate, ManagerType
from memlet.ids import GroupId, MessageId
from memlet.messages.schemas import LettaMessage, LettaMessageUpdate, MessageType
from memlet.messages.service import HistoryQuery

router = APIRouter(prefix="/groups", tags=["groups"])

# Letta Cloud's project slug, read by its proxy; accepted and ignored here.
ProjectHeader = Annotated[
    str | None, Header(alias="X-Project", description="The project slug to associate with the group (cloud only).")
]


@router.get("/", operation_id="list_groups", response_model=list[Group], deprecated=True)
async def list_groups(
    service: GroupServiceDep,
    page: Annotated[Page, page_query(limit=50, order="asc")],
    manager_type: Annotated[ManagerType | None, Query(description="Search groups by manager type")] = None,
    project_id: Annotated[str | None, Query(description="Search groups by project id")] = None,
    show_hidden_groups: Annotated[bool | None, Query(include_in_schema=False)] = False,
) -> Any:
    """List the organization's groups, oldest first by default (hidden ones only when asked)."""
    filters = GroupFilters(manager_type=manager_type, project_id=project_id, show_hidden=bool(show_hidden_groups))
    return await service.search(filters, page)


@router.get("/count", operation_id="count_groups", response_model=int, deprecated=True)
async def count_groups(service: GroupServiceDep) -> int:
    """Count the organization's groups."""
    return await service.count()


@router.get("/{group_id}", operation_id="retrieve_group", response_model=Group, deprecated=True)
async def retrieve_group(group_id: GroupId, service: GroupServiceDep) -> Any:
    """Get a group by id."""
    return await service.get(group_id)


@router.post("/", operation_id="create_group", response_model=Group, deprecated=True)
async def create_group(body: GroupCreate, service: GroupServiceDep, x_project: ProjectHeader = None) -> Any:
    """Create a group of agents; without a manager config it is a round-robin group."""
    return await service.create(body)


@router.patch("/{group_id}", operation_id="modify_group", response_model=Group, deprecated=True)
async def modify_group(
    group_id: GroupId, body: GroupUpdate, service: GroupServiceDep, x_project: ProjectHeader = None
) -> Any:
    """Update a group's description, participants or manager settings (its pattern cannot change)."""
    return await service.modify(group_id, body)


@router.delete("/{group_id}", operation_id="delete_group", deprecated=True)
async def delete_group(group_id: GroupId, service: GroupServiceDep) -> Any:
    """Delete a group (its agents stay)."""
    await service.delete(group_id)
    return {"message": f"Group id={group_id} successfully deleted"}


@router.patch(
    "/{group_id}/messages/{message_id}",
    operation_id="modify_group_message",
    response_model=LettaMessage,
    deprecated=True,
)
async def modify_group_message(
    group_id: GroupId, message_id: MessageId, body: LettaMessageUpdate, service: GroupServiceDep
) -> Any:
    """Message editing was removed in Letta 0.16: messages are immutable (405 for an existing group)."""
    await service.modify_message(group_id, message_id)


@router.get(
    "/{group_id}/messages", operation_id="list_group_messages", response_model=list[LettaMessage], deprecated=True
)
async def list_group_messages(
    group_id: GroupId,
    service: GroupServiceDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 10,
    order: Literal["asc", "desc"] | None = None,
    order_by: Literal["created_at"] = "created_at",
    use_assistant_message: Annotated[bool, Query(deprecated=True)] = True,
    assistant_message_tool_name: Annotated[str, Query(deprecated=True)] = "send_message",
    assistant_message_tool_kwarg: Annotated[str, Query(deprecated=True)] = "message",
    include_return_message_types: Annotated[list[MessageType] | None, Query()] = None,
) -> Any:
    """List the group's messages (the manager agent's, when the group has one); no `order`: oldest first."""
    query = HistoryQuery(
        before=before,
        after=after,
        limit=limit,
        order=order,
        group_id=group_id,
        use_assistant_message=use_assistant_message,
        assistant_message_tool_name=assistant_message_tool_name,
        assistant_message_tool_kwarg=assistant_message_tool_kwarg,
        include_return_message_types=include_return_message_types,
    )
    return await service.list_messages(group_id, query)


@router.patch("/{group_id}/reset-messages", operation_id="reset_group_messages", deprecated=True)
async def reset_group_messages(group_id: GroupId, service: GroupServiceDep) -> None:
    """Delete every message of the group, for all of its agents."""
    await service.reset_messages(group_id)


@router.patch("/{group_id}/blocks/attach/{block_id}", operation_id="attach_block_to_group", deprecated=True)
async def attach_block_to_group(block_id: str, group_id: GroupId, service: GroupServiceDep) -> None:
    """Share a block with the group (linked on the group only; its agents do not get it, as in Letta)."""
    await service.attach_block(group_id, block_id)


@router.patch("/{group_id}/blocks/detach/{block_id}", operation_id="detach_block_from_group", deprecated=True)
async def detach_block_from_group(block_id: str, group_id: GroupId, service: GroupServiceDep) -> None:
    """Stop sharing a block with the group."""
    await service.detach_block(group_id, block_id)
