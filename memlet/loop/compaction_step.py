"""Compaction inside a turn: before a step (memlet's guard that every prompt fits), after a step whose reported
`total_tokens` pass 90% of the window (Letta's trigger), and when the provider says the prompt overflowed.

Each writes the summary with the step's ids, reloads the state and yields the compaction event (only with
`include_compaction_messages`) and the summary row (V3 only: V2 turns never show it, as in Letta). The summary goes to the summarizer model of the agent's
`compaction_settings`, through a client opened for the summarizer's config.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from memlet.llm.chat_format import is_v2, thoughts_scrubbed
from memlet.llm.token_estimate import provider_counted
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopState
from memlet.loop.buffer_chat import BufferChat
from memlet.loop.commit import commit_compaction
from memlet.loop.compaction_plan import CompactionPlan, Prompt, plan_compaction, summarizer
from memlet.loop.headroom import prompt_budget
from memlet.loop.llm_call import stored_system_text
from memlet.loop.run_tracker import RunState
from memlet.loop.summarizer import SummarizerSettings, summarizer_llm_config

MAX_OVERFLOW_RETRIES = 3  # Letta retries a step that overflowed the provider's window after compacting, 3 times


@dataclass(frozen=True)
class Site:
    """Where a compaction happens: the step it belongs to, the tools its prompt carries, the window, and the
    turn's buffer conversion (shared with the step's request, `RunState.chat`)."""

    step_id: str
    tools: list[dict[str, Any]]
    window: int
    chat: BufferChat = field(default_factory=BufferChat)


async def _plan(run: RunState, state: LoopState, site: Site, *, force: bool, complete: bool) -> CompactionPlan | None:
    agent, window = state.agent, site.window
    scrub = thoughts_scrubbed(agent.llm_config or {})
    prompt = Prompt(stored_system_text(state), run.pending, site.tools, agent.agent_type, site.chat, scrub)
    rows, limit = state.messages[1:], prompt_budget(window, agent.llm_config.get("max_tokens"))
    if not force and prompt.surely_under(rows, limit):
        return None  # the common step: the prompt fits for sure (`plan_compaction` asks first too)
    settings = SummarizerSettings.from_stored(agent.compaction_settings)
    config = summarizer_llm_config(agent.llm_config, settings.model)

    async def summarize_with(text: str) -> str:
        # The summarizer's own client (opened only when a summary is due): its config, not the step's, shapes
        # the request (an Anthropic client's thinking follows the config it is opened for).
        async with run.deps.llm_for(config, run.org_id) as own:
            return await summarizer(own, config, settings, window, run.options.user_id)(text)

    plan = await plan_compaction(
        summarize_with=summarize_with,
        settings=settings,
        prompt=prompt,
        rows=rows,
        window=window,
        limit=limit,
        complete=complete,
        force=force,
    )
    if plan is not None and not provider_counted(agent.llm_config or {}):
        # The size reported after it (stats, the usage's context_tokens) is Letta's estimate for this model;
        # Claude's and Gemini's stay memlet's local count (Letta asked their provider).
        plan.tokens_after = prompt.letta_estimate(plan.kept)
    return plan


async def compact(
    run: RunState,
    state: LoopState,
    out: list[LoopState],
    site: Site,
    *,
    trigger: str,
    force: bool,
    complete: bool,
    tokens_before: int | None = None,
) -> AsyncIterator[ev.LoopEvent]:
    """Compact if needed (always when `force`); on success `out` receives the reloaded state."""
    step_id, window = site.step_id, site.window
    plan = await _plan(run, state, site, force=force, complete=complete)
    if plan is None:
        return
    if tokens_before is not None:
        plan.tokens_before = tokens_before  # the provider's count that triggered it, as Letta reports
    # Letta's V2 loops compact out of the turn's sight: the summary (a user row) is never in their response or
    # stream, whatever include_compaction_messages says (a V3 turn shows it).
    v2 = is_v2(state.agent.agent_type)
    shown = run.options.include_compaction_messages and not v2
    summary = await commit_compaction(
        run.deps.sessionmaker,
        state=state,
        plan=plan,
        window=window,
        role="summary" if shown else "user",
        trigger=trigger,
        run_id=run.run_id,
        step_id=step_id,
    )
    out.append(await run.load())
    run.turn_system = None  # the compaction rebuilt the prompt: the turn sends the new one from now on
    # The usage's context size is now the compacted window's (Letta Code's context meter reads it), as Letta's
    # estimate after a compaction; the next LLM call's total replaces it.
    if not v2:  # Letta's V2 usage has no context size
        run.usage["context_tokens"] = plan.tokens_after
    run.needs_reload = True
    if summary is None or v2:
        return
    if shown:
        yield ev.CompactionStarted(step_id, trigger, plan.tokens_before, window)
    yield ev.MessagesCommitted([summary], summary=plan.summary)
