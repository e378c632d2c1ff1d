"""The hook lower domains use to rebuild agents' system messages after their memory changed.

Blocks, folders and files sit below the agents package, which stores the compiled system message
(`agents/system_message.py`), so their services cannot import it. `app.lifespan` hands them the implementation
(`agents.system_message.rebuild_prompts`) through `app.state.rebuild_prompts`, and their `deps.py` passes it in.
"""

from collections.abc import Sequence
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


class PromptRebuilder(Protocol):
    """Recompile the `agents`' stored system messages in the caller's transaction (their recompile times stay)."""

    async def __call__(self, session: AsyncSession, agents: Sequence[orm.Agent]) -> None: ...
