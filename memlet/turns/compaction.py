"""``POST /v1/agents/{agent_id}/summarize`` and ``/v1/conversations/{id}/compact``: compact on demand.

The agent's `compaction_settings`, overlaid with the request's, choose the mode, the sliding-window share, the
summarizer model, its prompt and the summary's length. The compaction is forced (the window need not be full)
and cuts at turn boundaries only. A compaction that does not shrink the buffer is a 400, as in Letta; its summary
row has the `summary` role, so a window left with only it (and the system message) has nothing more to compact.
"""

import json
from typing import Any

from pydantic import BaseModel

from memlet.actor import Actor
from memlet.agents.parts import CompactionSettings
from memlet.errors import BadRequestError
from memlet.llm.chat_format import is_v2, text_parts
from memlet.llm.tool_definitions import tool_definition
from memlet.loop.agent_state import LoopRepository
from memlet.loop.commit import commit_compaction
from memlet.loop.compaction_plan import Prompt, plan_compaction, summarizer, turn_complete
from memlet.loop.headroom import DEFAULT_CONTEXT_WINDOW, prompt_budget
from memlet.loop.runner import LoopDeps
from memlet.loop.summarizer import SummarizerSettings, summarizer_llm_config

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


def _request_layer(settings: CompactionSettings | None) -> dict[str, Any] | None:
    """Only the fields the request set: the rest stay the agent's."""
    return settings.model_dump(exclude_unset=True) if settings is not None else None


def _unpacked(text: str) -> str:
    """A stored summary's `message` (the packed system alert's text), as Letta's early return reads it."""
    try:
        packed = json.loads(text)
    except ValueError:
        return text
    return str(packed.get("message")) if isinstance(packed, dict) and packed.get("message") is not None else text


async def summarize(
    deps: LoopDeps,
    actor: Actor,
    agent_id: str,
    conversation_id: str | None = None,
    settings: CompactionSettings | None = None,
    *,
    compact_route: bool = False,
) -> CompactionResponse:
    """Summarize the oldest turns of the agent's (or a conversation's) window into one message after the system
    message. With nothing to summarize (only the system message and summaries), the agent's `/summarize` answers
    the window unchanged, as Letta does; `/v1/conversations/{id}/compact` (`compact_route`), any thread, has no
    such early return in Letta: its summary cannot shrink the window, so it is Letta's 400 "failed to reduce"."""
    async with deps.sessionmaker() as session:
        state = await LoopRepository(session).load_state_or_404(agent_id, actor.organization_id, conversation_id)
    agent, rows = state.agent, state.messages
    if not [r for r in rows[1:] if r.role not in ("system", "summary")]:
        if compact_route:
            raise BadRequestError(NOT_REDUCED if rows else "No in-context messages found for this conversation.")
        existing = next((_unpacked(text_parts(r.content)) for r in rows if r.role == "summary"), "")
        return CompactionResponse(summary=existing, num_messages_before=len(rows), num_messages_after=len(rows))
    tools = [
        tool_definition(t.json_schema or {"name": t.name}, v2=is_v2(agent.agent_type), terminal=False)
        for t in state.tools
    ]
    chosen = SummarizerSettings.from_stored(agent.compaction_settings, _request_layer(settings))
    config = summarizer_llm_config(agent.llm_config, chosen.model)
    window = int((agent.llm_config or {}).get("context_window") or DEFAULT_CONTEXT_WINDOW)
    # The client is shared with the app's other requests: the pool closes it, never this request.
    async with deps.llm_for(config, actor.organization_id) as llm:
        plan = await plan_compaction(
            summarize_with=summarizer(llm, config, chosen, window, actor.user_id),
            settings=chosen,
            prompt=Prompt(text_parts(rows[0].content), [], tools, agent.agent_type),
            rows=rows[1:],
            window=window,
            limit=prompt_budget(window, agent.llm_config.get("max_tokens")),
            complete=turn_complete(rows[1:]),
            force=True,
        )
    after = len(plan.kept) + 2 if plan is not None else len(rows)
    if plan is None or after >= len(rows):
        raise BadRequestError(NOT_REDUCED)
    # Letta's manual compaction stores its summary with the `summary` role (`compact(use_summary_role=True)`).
    await commit_compaction(deps.sessionmaker, state=state, plan=plan, window=window, role="summary", trigger=None)
    return CompactionResponse(summary=plan.summary, num_messages_before=len(rows), num_messages_after=after)
