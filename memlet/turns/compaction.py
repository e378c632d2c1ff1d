"""``POST /v1/agents/{agent_id}/summarize``: compact the context window on demand, with the loop's summarizer.

The loop compacts only when a prompt overflows the window; here the current prompt size is used as the limit,
so the same sliding-window plan (summarize the oldest part, keep the rest) runs now. A summarize that does not
shrink the buffer is a 400, as in Letta.
"""

from pydantic import BaseModel

from memlet.actor import Actor
from memlet.agents.parts import CompactionSettings
from memlet.errors import BadRequestError
from memlet.llm.chat_format import is_v2, prompt_tokens, to_openai_messages, tool_definition
from memlet.loop.agent_state import LoopRepository
from memlet.loop.commit import commit_compaction
from memlet.loop.runner import LoopDeps
from memlet.loop.summarizer import plan_compaction

NOT_REDUCED = (
    "Summarization failed to reduce the number of messages. You may not have enough messages to compact or need "
    "to use a different CompactionSettings (e.g. using `all` mode)."
)


class CompactionRequest(BaseModel):
    compaction_settings: CompactionSettings | None = None


class CompactionResponse(BaseModel):
    summary: str
    num_messages_before: int
    num_messages_after: int


def _text(content: list[dict[str, object]] | None) -> str:
    return "".join(str(p.get("text", "")) for p in content or [] if p.get("type") == "text")


async def summarize(
    deps: LoopDeps, actor: Actor, agent_id: str, conversation_id: str | None = None
) -> CompactionResponse:
    """Summarize the oldest part of the agent's (or a conversation's) window into one message after the system
    message. A conversation with nothing to summarize is a 400, as in Letta."""
    async with deps.sessionmaker() as session:
        state = await LoopRepository(session).load_state_or_404(agent_id, actor.organization_id, conversation_id)
    agent, rows = state.agent, state.messages
    if not [r for r in rows[1:] if r.role not in ("system", "summary")]:
        if conversation_id is not None:
            raise BadRequestError("No in-context messages found for this conversation.")
        existing = next((_text(r.content) for r in rows if r.role == "summary"), "")
        return CompactionResponse(summary=existing, num_messages_before=len(rows), num_messages_after=len(rows))
    system_text = _text(rows[0].content)
    tools = [
        tool_definition(t.json_schema or {"name": t.name}, v2=is_v2(agent.agent_type), terminal=False)
        for t in state.tools
    ]
    current = prompt_tokens(to_openai_messages(system_text, rows[1:], agent.agent_type), tools)
    window = int((agent.llm_config or {}).get("context_window") or 128_000)
    # The client is shared with the app's other requests: the pool closes it, never this request.
    async with deps.llm_for(agent.llm_config, actor.organization_id) as llm:
        plan = await plan_compaction(
            llm=llm,
            model=str(agent.llm_config.get("model")),
            system=system_text,
            rows=rows[1:],
            pending=[],
            tools=tools,
            agent_type=agent.agent_type,
            window=min(window, current - 1),
        )
    after = len(plan.kept) + 2 if plan is not None else len(rows)
    if plan is None or plan.summary is None or after >= len(rows):
        raise BadRequestError(NOT_REDUCED)
    await commit_compaction(deps.sessionmaker, state=state, plan=plan, window=window)
    return CompactionResponse(summary=plan.summary, num_messages_before=len(rows), num_messages_after=after)
