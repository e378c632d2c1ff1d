"""``POST /v1/agents/{agent_id}/messages/preview-raw-payload``: the body the next LLM call would carry.

Built by the loop's own functions (`request_tools`, `build_chat_request`) from the agent's stored state plus the
request's input messages, then rendered by the agent's LLM client exactly as it would post it, minus the
transport-level streaming flags (``stream``, ``stream_options``). Nothing is stored and no model is called, so
the preview shows the request before any compaction the loop might do when the prompt overflows. As in the
loop, ``override_model`` and ``override_system`` apply for this request only.
"""

from typing import Any

from memlet.actor import Actor
from memlet.llm.client import AnthropicClient, LLMClient, OpenAICompatibleClient
from memlet.llm.types import ChatRequest
from memlet.loop.agent_state import LoopRepository
from memlet.loop.deps import LoopDeps
from memlet.loop.llm_call import build_chat_request, request_system_text, request_tools
from memlet.loop.llm_clients import ByokClient
from memlet.loop.runner import input_row
from memlet.messages.requests import LettaRequest, MessageCreate
from memlet.tools.solver import ToolRulesSolver


def request_body(llm: LLMClient, request: ChatRequest) -> dict[str, Any]:
    """The JSON body `llm` would post for `request` (provider-specific fields merged in, as the client does)."""
    if isinstance(llm, ByokClient):
        llm = llm.inner
    if isinstance(llm, OpenAICompatibleClient | AnthropicClient):
        # The client's own rendering (max_tokens naming per endpoint, optional fields left out).
        params = llm.request_body(request)
    else:  # a client without an OpenAI-style body (tests' fakes): the request's own fields
        params = {k: v for k, v in vars(request).items() if v is not None and k != "stream"}
    extra = params.pop("extra_body", None) or {}
    return {**params, **extra}


async def preview_request(
    deps: LoopDeps,
    actor: Actor,
    agent_id: str,
    req: LettaRequest,
    llm_override: dict[str, Any] | None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """The raw chat request for sending `req` to the agent (or one of its conversations) now; 404 if unknown."""
    async with deps.sessionmaker() as session:
        state = await LoopRepository(session).load_state_or_404(agent_id, actor.organization_id, conversation_id)
    agent = state.agent  # detached: the override below never reaches the database
    if llm_override:
        agent.llm_config = {**(agent.llm_config or {}), **llm_override}
    pending = [input_row(item, agent, "") for item in req.messages or [] if isinstance(item, MessageCreate)]
    solver = ToolRulesSolver.from_stored(agent.tool_rules)
    client_tools = [t.model_dump() for t in req.client_tools or []]
    tools, _, tool_choice = request_tools(state, solver, client_tools)
    skills = [s.model_dump() for s in req.client_skills or []]
    system_text = request_system_text(state, req.override_system, skills)
    request = build_chat_request(state, system_text, pending, tools, tool_choice, user=actor.user_id)
    async with deps.llm_for(agent.llm_config, actor.organization_id) as llm:
        return request_body(llm, request)
