"""How agent responses get ``managed_group``: the groups an agent manages live in `groups`, above `agents`.

`app.lifespan` puts the implementation (`memlet.groups.views.managed_groups`) on ``app.state`` and `agents/deps.py`
passes it to `AgentService`; without one (scripts, service tests) ``managed_group`` stays null.
"""

from collections.abc import Mapping, Sequence
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.parts import Group


class ManagedGroupLookup(Protocol):
    async def __call__(self, session: AsyncSession, agent_ids: Sequence[str]) -> Mapping[str, Group]:
        """The group each of the agents manages, keyed by agent id, in a fixed number of statements."""
        ...
