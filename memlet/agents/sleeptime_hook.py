"""How agent routes reach the sleeptime code, which sits above `agents` (it uses groups and the agent service).

`app.lifespan` puts the implementation (`memlet.sleeptime.lifecycle.SleeptimeLifecycle`) on ``app.state`` and
`agents/deps.py` passes it to `AgentService`; without one (scripts, service tests) nothing sleeptime happens.
"""

from collections.abc import Sequence
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor


class SleeptimeHook(Protocol):
    async def enable(self, session: AsyncSession, actor: Actor, agent_id: str) -> None:
        """Give the agent its sleeptime agent and group, unless it already manages a sleeptime group."""
        ...

    async def before_delete(self, session: AsyncSession, actor: Actor, agent_id: str) -> None:
        """Clean up the sleeptime side of an agent about to be deleted (main or sleeptime agent)."""
        ...

    async def blocks_attached(
        self, session: AsyncSession, actor: Actor, agent_id: str, block_ids: Sequence[str]
    ) -> None:
        """Attach blocks just attached to a main agent to its sleeptime agents too."""
        ...
