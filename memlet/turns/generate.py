"""``POST /v1/agents/{agent_id}/generate``: one LLM completion with the agent's model, outside the agent.

Nothing of the agent is read but its ``llm_config`` (or the ``override_model``'s), and nothing is written: no
memory, no tools, no messages, no run. The prompt goes out as one user message after a system message (the given
``system_prompt``, else a minimal one, since some providers need a system message). With ``response_schema`` the
model is made to call one ``structured_output`` tool whose arguments are the answer (as in Letta).
"""

from typing import Any

from pydantic import BaseModel, Field, field_validator

from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.errors import LLMError, MemletError, NotFoundError
from memlet.llm.model_quirks import prompt_cache_retention, response_format_param, supports_verbosity
from memlet.llm.responses_format import uses_responses_api
from memlet.llm.types import LETTA_V1_AGENT, ChatRequest, ChatResult
from memlet.loop.deps import LoopDeps
from memlet.messages.schemas import LettaUsageStatistics
from memlet.providers.catalog import ModelCatalog

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
STRUCTURED_OUTPUT_TOOL = "structured_output"


class GenerateRequest(BaseModel):
    """Request for direct LLM generation without agent processing."""

    prompt: str = Field(..., min_length=1, description="The prompt/message to send to the LLM")
    system_prompt: str | None = Field(None, description="Optional system prompt to prepend to the conversation")
    override_model: str | None = Field(None, description="Model handle to use instead of agent's default")
    response_schema: dict[str, Any] | None = Field(None, description="JSON schema for structured output")

    @field_validator("prompt")
    @classmethod
    def _prompt_has_text(cls, value: str) -> str:
        # Letta answers 422 for a prompt of only whitespace, as for an empty one.
        if not value.strip():
            raise ValueError("prompt cannot be empty or whitespace-only")
        return value


class GenerateResponse(BaseModel):
    """Response from direct LLM generation."""

    content: str = Field(..., description="The LLM's response text")
    model: str = Field(..., description="The model that generated this response")
    usage: LettaUsageStatistics = Field(..., description="Token usage statistics")


class BadGatewayError(MemletError):
    """The provider failed (Letta answers 502 on this route, not the loop's LLM error statuses)."""

    status_code = 502


def structured_output_tool(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        "type": "function",
        "function": {
            "name": STRUCTURED_OUTPUT_TOOL,
            "description": "Returns a structured response matching the requested schema.",
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": schema.get("required", list(properties)),
            },
        },
    }


def chat_request(
    config: dict[str, Any], body: GenerateRequest, user: str | None = None, agent_type: str | None = None
) -> ChatRequest:
    """The one request of a generation; `agent_type`: the agent's, when it is a letta_v1 agent asked for no schema
    (its reasoning model then answers through OpenAI's Responses API, with the config's reasoning effort, verbosity
    and response format, as Letta builds that request; other requests are as before)."""
    messages = [
        {"role": "system", "content": body.system_prompt or DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": body.prompt},
    ]
    tools = [structured_output_tool(body.response_schema)] if body.response_schema else None
    forced = {"type": "function", "function": {"name": STRUCTURED_OUTPUT_TOOL}} if tools else None
    request = ChatRequest(
        model=str(config.get("model")),
        messages=messages,
        tools=tools,
        tool_choice=forced,
        temperature=config.get("temperature"),
        max_tokens=config.get("max_tokens"),
        stream=False,
        prompt_cache_retention=prompt_cache_retention(config),
        user=user,
        agent_type=agent_type,
    )
    if uses_responses_api(request):
        effort = config.get("reasoning_effort")
        request.reasoning_effort = effort if effort and effort != "none" else None
        request.verbosity = config.get("verbosity") if supports_verbosity(request.model) else None
        request.response_format = response_format_param(config.get("response_format"))
    return request


def content_of(result: ChatResult, structured: bool) -> str:
    if structured and result.tool_calls:
        return result.tool_calls[0].arguments
    return result.content or ""


async def generate_completion(
    deps: LoopDeps, actor: Actor, catalog: ModelCatalog | None, agent_id: str, body: GenerateRequest
) -> GenerateResponse:
    async with deps.sessionmaker() as session:
        agent = await AgentRepository(session).get_or_404(actor.organization_id, agent_id)
        config = dict(agent.llm_config or {})
        # Letta builds a schema's request as another agent type's: only a plain one can go to the Responses API.
        agent_type = LETTA_V1_AGENT if agent.agent_type == LETTA_V1_AGENT and not body.response_schema else None
        if body.override_model and catalog is not None:
            try:
                config = await catalog.resolve_llm(session, actor.organization_id, body.override_model)
            except NotFoundError as exc:
                raise NotFoundError(
                    "Model", message=f"Model '{body.override_model}' not found or not accessible"
                ) from exc
    try:
        async with deps.llm_for(config, actor.organization_id) as llm:
            result = await llm.chat(chat_request(config, body, actor.user_id, agent_type))
    except LLMError as exc:
        raise BadGatewayError(f"LLM provider error: {exc.message}") from exc
    usage = LettaUsageStatistics(
        completion_tokens=result.usage.completion_tokens,
        prompt_tokens=result.usage.prompt_tokens,
        total_tokens=result.usage.total_tokens,
    )
    return GenerateResponse(
        content=content_of(result, body.response_schema is not None), model=str(config.get("model")), usage=usage
    )
