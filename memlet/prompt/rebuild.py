"""The hook lower domains use to rebuild agents' system messages after their memory changed.

Blocks, folders and files sit below the agents package, which stores the compiled system message
(`agents/system_message.py`), so their services cannot import it. `app.lifespan` hands them the implementation
(`agents.system_message.rebuild_prompt`) through `app.state.rebuild_prompt`, and their `deps.py` passes it in.
"""

from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


class PromptRebuilder(Protocol):
    """Recompile `agent`'s stored system message in the caller's transaction (the recompile time stays)."""

    async def __call__(self, session: AsyncSession, agent: orm.Agent) -> None: ...
