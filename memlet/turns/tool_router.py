"""``POST /v1/agents/{agent_id}/tools/{tool_name}/run``: run one of an agent's tools outside the loop."""

from typing import Annotated, Any

from fastapi import APIRouter, Body

from memlet.api.deps import ActorDep
from memlet.ids import AgentId
from memlet.mcp.schemas import ToolExecutionResult
from memlet.turns.deps import LoopDepsDep
from memlet.turns.tool_run import ToolExecuteRequest, run_tool_for_agent

router = APIRouter(prefix="/agents", tags=["tools"])


@router.post("/{agent_id}/tools/{tool_name}/run", operation_id="run_tool_for_agent", response_model=ToolExecutionResult)
async def run_agent_tool(
    agent_id: AgentId,
    tool_name: str,
    deps: LoopDepsDep,
    actor: ActorDep,
    body: Annotated[ToolExecuteRequest | None, Body()] = None,
) -> Any:
    """Run one of the agent's tools with the given arguments, outside the agent loop."""
    args = body.args if body is not None else {}
    return await run_tool_for_agent(
        deps.sessionmaker,
        deps.settings,
        actor,
        agent_id,
        tool_name,
        args,
        embedder=deps.embedder,
        messenger=deps.agent_messenger,
    )
