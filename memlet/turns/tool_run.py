"""Run one of an agent's tools from the API, outside the loop (``POST /v1/agents/{agent_id}/tools/{name}/run``).

The call goes through the loop's own tool registry: built-in memory tools edit the agent's loaded blocks (block
limits and read-only checks apply), and the edits are written with the loop's commit helper, which also
recompiles the system message. Custom tools run in the sandbox with the agent's secrets as environment. No
message, step or run is stored. Like Letta, the agent's request lock is not taken, so a tool run during a turn
is last-writer-wins with that turn's memory edits.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.actor import Actor
from memlet.config import Settings
from memlet.errors import NotFoundError
from memlet.loop.agent_messaging import AgentMessenger
from memlet.loop.agent_state import LoopRepository
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.builtins import BUILTIN_TOOLS, WEB_TOOLS
from memlet.loop.commit import commit_memory_edits
from memlet.loop.tool_dispatch import execute_tool
from memlet.mcp.schemas import ToolExecutionResult
from memlet.passages.embedder import Embedder
from memlet.tool_exec.returns import noted_over_limit


class ToolExecuteRequest(BaseModel):
    """Body of the route: the tool's arguments by name."""

    model_config = ConfigDict(extra="forbid")

    args: dict[str, Any] = Field(default_factory=dict, description="Arguments to pass to the tool")


async def run_tool_for_agent(
    maker: async_sessionmaker[AsyncSession],
    settings: Settings,
    actor: Actor,
    agent_id: str,
    tool_name: str,
    args: dict[str, Any],
    *,
    embedder: Embedder | None = None,
    messenger: AgentMessenger | None = None,
) -> ToolExecutionResult:
    """Run the agent's tool `tool_name` with `args`; a failing tool is ``status="error"`` with a null return.

    `embedder` embeds what `archival_memory_insert` stores and what `archival_memory_search` asks, as in a turn;
    `messenger` runs the targets' turns of the multi-agent tools.
    Raises NotFoundError for an unknown agent or a tool that is not attached to it.
    """
    async with maker() as session:
        state = await LoopRepository(session).load_state_or_404(agent_id, actor.organization_id)
    tool = next((t for t in state.tools if t.name == tool_name), None)
    if tool is None:
        raise NotFoundError("Tool", message=f"Tool '{tool_name}' not found or not attached to agent '{agent_id}'")
    ctx = ToolContext(
        agent=state.agent, blocks=state.blocks, sessionmaker=maker, embedder=embedder, messenger=messenger
    )
    outcome = await execute_tool(ctx, tool, dict(args), settings)
    # As Letta's: a return past the tool's limit comes back whole, as text with a note appended.
    outcome.value = noted_over_limit(outcome.value, tool.return_char_limit)
    if outcome.success and not await commit_memory_edits(maker, ctx):
        raise NotFoundError("Agent", agent_id)
    builtin = (tool.name in BUILTIN_TOOLS or tool.name in WEB_TOOLS) and tool.tool_type != "custom"
    if not outcome.success:
        # Letta drops the return of a failed run; the error text stays readable in stderr.
        stderr = outcome.stderr or ([str(outcome.value)] if outcome.value else [])
        return ToolExecutionResult(status="error", stdout=outcome.stdout, stderr=stderr or None)
    if builtin:  # Letta's core tools capture no output streams
        return ToolExecutionResult(status="success", func_return=outcome.value)
    return ToolExecutionResult(
        status="success", func_return=outcome.value, stdout=outcome.stdout, stderr=outcome.stderr
    )
