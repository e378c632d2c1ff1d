"""The tools attached to one agent: list, attach, detach, and the `requires_approval` rule of a tool."""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.tools.repository import ToolRepository
from memlet.tools.rules import RequiresApprovalToolRule, dump_tool_rules
from memlet.tools.schemas import Tool


def with_approval(rules: list[dict[str, Any]], tool_name: str, required: bool) -> list[dict[str, Any]] | None:
    """The agent's rules with a `requires_approval` rule for the tool added or removed; None when unchanged."""
    matches = [r for r in rules if r.get("tool_name") == tool_name and r.get("type") == "requires_approval"]
    if required and not matches:
        return [*rules, *dump_tool_rules([RequiresApprovalToolRule(tool_name=tool_name)])]
    if not required and matches:
        return [r for r in rules if r not in matches]
    return None


class AgentToolService:
    """The tools attached to one agent."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.tools = ToolRepository(session)
        self.agents = AgentRepository(session)

    async def _agent(self, actor: Actor, agent_id: str, *, for_update: bool = False) -> orm.Agent:
        agent = await self.agents.get_or_404(actor.organization_id, agent_id, for_update=for_update)
        return agent

    async def list_tools(self, actor: Actor, agent_id: str, page: Page) -> list[Tool]:
        await self._agent(actor, agent_id)
        return [Tool.model_validate(t) for t in await self.tools.list_for_agent(agent_id, page)]

    async def attach(self, actor: Actor, agent_id: str, tool_id: str) -> None:
        """Attach once; a tool that asks for approval by default gets a `requires_approval` rule."""
        agent = await self._agent(actor, agent_id, for_update=True)
        tool = await self.tools.get_or_404(actor.organization_id, tool_id)
        await self.tools.attach(agent_id, [tool_id])
        if tool.default_requires_approval:
            self._set_rules(agent, with_approval(list(agent.tool_rules or []), tool.name, True))

    async def detach(self, actor: Actor, agent_id: str, tool_id: str) -> None:
        """Detaching a tool that is not attached is a no-op, as in Letta."""
        await self._agent(actor, agent_id)
        await self.tools.detach(agent_id, tool_id)

    async def set_approval(self, actor: Actor, agent_id: str, tool_name: str, required: bool) -> None:
        agent = await self._agent(actor, agent_id, for_update=True)
        self._set_rules(agent, with_approval(list(agent.tool_rules or []), tool_name, required))

    def _set_rules(self, agent: orm.Agent, rules: list[dict[str, Any]] | None) -> None:
        # A new list object, so the JSONB column is seen as changed.
        if rules is not None:
            agent.tool_rules = rules
