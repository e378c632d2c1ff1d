"""``POST /v1/agents/{agent_id}/generate``: a one-off completion with the agent's model (nothing is stored)."""

from typing import Any

from fastapi import APIRouter, Request

from memlet.api.deps import ActorDep
from memlet.ids import AgentId
from memlet.turns.deps import LoopDepsDep
from memlet.turns.generate import GenerateRequest, GenerateResponse, generate_completion

router = APIRouter(prefix="/agents", tags=["agents"])


@router.post(
    "/{agent_id}/generate",
    operation_id="generate_completion",
    response_model=GenerateResponse,
    responses={404: {"description": "Agent not found"}, 502: {"description": "LLM provider error"}},
)
async def generate(
    agent_id: AgentId, body: GenerateRequest, request: Request, deps: LoopDepsDep, actor: ActorDep
) -> Any:
    """Generate a completion directly from the LLM provider using the agent's configuration.

    No memory or context retrieval, no tool calling, no message persistence, no agent state change. The prompt
    is sent as a user message, after ``system_prompt`` when given; ``override_model`` picks another model handle
    of the organization's providers; ``response_schema`` forces a structured (JSON) answer.
    """
    catalog = getattr(request.app.state, "catalog", None)
    return await generate_completion(deps, actor, catalog, agent_id, body)
