"""What the routes that link things to an agent (tools, folders) answer.

letta-client 1.x gets `null` and older clients the updated AgentState, as Letta 0.16.8 does (SPEC "SDK-version
sniffing"); the deprecated `/sources` routes always answer the AgentState.
"""

from fastapi import Request

from memlet.actor import Actor
from memlet.agents.deps import get_agent_service
from memlet.agents.schemas import AgentState
from memlet.api.clients import is_sdk_v1
from memlet.api.deps import SessionDep


async def agent_state_reply(request: Request, session: SessionDep, actor: Actor, agent_id: str) -> AgentState:
    """The agent as it is now, after the route's change."""
    return await (await get_agent_service(request, session)).get_state(actor, agent_id)


async def agent_reply(request: Request, session: SessionDep, actor: Actor, agent_id: str) -> AgentState | None:
    """Nothing for 1.x SDKs, the updated agent for older clients."""
    if is_sdk_v1(request):
        return None
    return await agent_state_reply(request, session, actor, agent_id)
