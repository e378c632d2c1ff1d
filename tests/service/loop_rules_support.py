"""Tools and request probes shared by the loop's rule and interruption tests."""

import json
from typing import Any

from memlet.db import models as orm
from memlet.loop.agent_state import LoopRepository
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema


def noop(name: str, requires_approval: bool | None = None) -> CustomTool:
    return CustomTool(
        name=name,
        source_code=f'def {name}() -> str:\n    """No-op."""\n    return "{name} done"\n',
        json_schema=function_schema(name, {}),
        default_requires_approval=requires_approval,
    )


def tool_texts(rows: list[orm.Message]) -> list[dict[str, Any]]:
    return [json.loads(r.content[0]["text"]) for r in rows if r.role == "tool"]


async def blocks_of(env: LoopEnv, agent_id: str) -> dict[str, str]:
    async with env.sessionmaker() as session:
        return {b.label: b.value for b in await LoopRepository(session).blocks.of_agent(agent_id)}


# Parallel tool calls on: the model may return several calls in one response.
PARALLEL = {"parallel_tool_calls": True}
