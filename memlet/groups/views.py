"""Group rows as the public ``Group``, with their participants and shared blocks, for many groups at once."""

from collections.abc import Mapping, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.groups.repository import GroupRepository
from memlet.groups.schemas import Group

_GROUP_COLUMNS = tuple(name for name in Group.model_fields if name not in ("agent_ids", "shared_block_ids"))


async def group_views(groups: GroupRepository, rows: Sequence[orm.Group]) -> list[Group]:
    """The views of ``rows``, in their order: two statements whatever their number."""
    group_ids = [r.id for r in rows]
    agent_ids = await groups.agent_ids_for(group_ids)
    block_ids = await groups.shared_block_ids_for(group_ids)
    return [
        Group.model_validate(
            {
                **{c: getattr(r, c) for c in _GROUP_COLUMNS},
                "agent_ids": agent_ids.get(r.id, []),
                "shared_block_ids": block_ids.get(r.id, []),
            }
        )
        for r in rows
    ]


async def managed_groups(session: AsyncSession, agent_ids: Sequence[str]) -> Mapping[str, Group]:
    """The group each of the agents manages (Letta's ``AgentState.managed_group``), keyed by agent id.

    Three statements for a whole page of agents, none when the page is empty. This is the implementation of
    `memlet.agents.managed_group_hook.ManagedGroupLookup` that `app.lifespan` hands to the agent routes.
    """
    if not agent_ids:
        return {}
    repo = GroupRepository(session)
    rows = await repo.managed_by_any(agent_ids)
    if not rows:
        return {}
    views = await group_views(repo, list(rows.values()))
    return {agent_id: view for agent_id, view in zip(rows, views, strict=True)}
