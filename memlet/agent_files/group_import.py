"""The groups of an agent file, created once its agents exist, through `GroupService.create`.

Every id is mapped to the new rows: `agent_ids`, the manager (`manager_config.manager_agent_id`) and the shared
blocks that are blocks of the file (Letta passed `shared_block_ids` on unmapped, linking the original blocks, or
none on another server; here an id that is no block of the file is dropped). A `sleeptime` group also turns its
manager's `enable_sleeptime` on: export writes the flag false (as Letta does, `export_service.py`), and the group
only fires while it is on, so the imported main agent's turns wake the imported sleeptime agent. Letta left the
flag off, and its imported sleeptime group never ran.
"""

from collections.abc import Mapping, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agent_files.schemas import GroupSchema
from memlet.agents.repository import AgentRepository
from memlet.groups.schemas import GroupCreate
from memlet.groups.service import GroupService


async def import_groups(
    session: AsyncSession,
    actor: Actor,
    groups: Sequence[GroupSchema],
    agent_ids: Mapping[str, str],
    block_ids: Mapping[str, str],
    project_id: str | None,
) -> list[str]:
    """Create the file's groups in order; their new ids."""
    service, agents = GroupService(session, actor), AgentRepository(session)
    created = []
    for group in groups:
        config = group.manager_config.model_dump() if group.manager_config is not None else {}
        if config.get("manager_agent_id") is not None:
            config["manager_agent_id"] = agent_ids[config["manager_agent_id"]]
        spec = GroupCreate.model_validate(
            {
                "agent_ids": [agent_ids[a] for a in group.agent_ids],
                "description": group.description,
                "manager_config": config or {"manager_type": "round_robin"},
                "project_id": project_id or group.project_id,
                "shared_block_ids": [block_ids[b] for b in group.shared_block_ids if b in block_ids],
                "hidden": group.hidden,
            }
        )
        view = await service.create(spec)
        if view.manager_type == "sleeptime" and view.manager_agent_id is not None:
            manager = await agents.get_or_404(actor.organization_id, view.manager_agent_id)
            manager.enable_sleeptime = True
        created.append(view.id)
    return created
