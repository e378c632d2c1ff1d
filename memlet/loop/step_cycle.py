"""One normal step of the loop: compact if needed, call the LLM (compact and retry on overflow), run the tools,
commit the step, compact after it when the provider's count passes the trigger."""

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from memlet import ids
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.errors import LLMError
from memlet.llm.chat_format import is_v2
from memlet.llm.errors import ContextWindowExceededError
from memlet.llm.types import ChatResult
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopState
from memlet.loop.cancel_signal import guarded, raced
from memlet.loop.chat_request import step_thoughts_in_kwargs
from memlet.loop.commit import commit_step
from memlet.loop.compaction_plan import trigger_threshold
from memlet.loop.compaction_step import MAX_OVERFLOW_RETRIES, Site, compact
from memlet.loop.headroom import DEFAULT_CONTEXT_WINDOW
from memlet.loop.images import inline_url_images
from memlet.loop.llm_call import DeltaLabels, call_llm, request_system_text, request_tools, stored_system_text
from memlet.loop.provider_trace import step_trace
from memlet.loop.response import StepResult, handle_response, needs_approval
from memlet.loop.run_tracker import RunState, turn_stop_reason
from memlet.loop.step_clock import StepClock
from memlet.runs.trace_write import TraceWrite


def _step_row(run: RunState, agent: orm.Agent, step_id: str, window: int) -> orm.Step:
    return orm.Step(
        id=step_id,
        organization_id=run.org_id,
        agent_id=run.agent_id,
        run_id=run.run_id,
        provider_name=agent.llm_config.get("model_endpoint_type"),
        provider_category=agent.llm_config.get("provider_category") or "base",
        model=agent.llm_config.get("model"),
        model_handle=agent.llm_config.get("handle"),
        model_endpoint=agent.llm_config.get("model_endpoint"),
        context_window_limit=window,
        status="pending",
        tags=[],
        project_id=agent.project_id,  # as Letta copies the agent's project onto its steps
    )


def _trace(
    run: RunState,
    agent: orm.Agent,
    step_id: str,
    outcome: ChatResult | Exception,
    sent: list[bytes | dict[str, Any]] | None,
) -> TraceWrite | None:
    """The step's provider trace (None: tracking is off, the call posted nothing, or a streamed call failed)."""
    streamed = run.options.stream_tokens
    if not sent or (isinstance(outcome, Exception) and (streamed or not isinstance(outcome, LLMError))):
        return None
    return step_trace(
        agent=agent,
        org_id=run.org_id,
        run_id=run.run_id,
        user_id=run.options.user_id,
        step_id=step_id,
        sent=sent[-1],
        result=outcome,
        streamed=streamed,
    )


async def llm_step(
    run: RunState, state: LoopState, outcome: list[StepResult], *, last: bool = False
) -> AsyncIterator[ev.LoopEvent]:
    """Run one step, yielding token deltas and the committed messages; `outcome` receives the StepResult. `last`:
    the turn's last step allowed (max_steps). A step that ends the turn closes the run in its commit (`run.closed`)
    unless a compaction follows it.

    Compaction: before the call when the prompt (by memlet's count) leaves no room for the reply; on a provider
    context-overflow error, then the call is retried (at most MAX_OVERFLOW_RETRIES times); and after the step
    when the provider's `total_tokens` pass 90% of the window (V3 after every step, V2 after the turn's last).
    Raises what the LLM call raises (the step row is written as failed first) and ContextOverflowError.
    """
    assert run.llm is not None
    agent = state.agent
    await inline_url_images(run.pending, run.deps.settings)  # once: the stored rows then hold the bytes
    tools, allowed, tool_choice = request_tools(state, run.solver, run.options.client_tools)
    window = int(agent.llm_config.get("context_window") or DEFAULT_CONTEXT_WINDOW)
    step_id = ids.new_id(ids.Prefix.STEP)
    fresh: list[LoopState] = []
    site = Site(step_id, tools, window, run.chat)
    # The first step's input is not committed yet: the buffer then ends with a complete turn.
    async for event in compact(
        run, state, fresh, site, trigger="context_window_exceeded", force=False, complete=bool(run.pending)
    ):
        yield event
    state = fresh[-1] if fresh else state
    step = _step_row(run, agent, step_id, window)
    clock = StepClock()
    assistant_id = ids.new_id(ids.Prefix.MESSAGE)
    result_box: list[Any] = []
    sent: list[bytes | dict[str, Any]] | None = [] if run.deps.settings.track_provider_trace else None
    for attempt in range(MAX_OVERFLOW_RETRIES + 1):
        ctx = run.step_context(state, step_id)
        if run.turn_system is None:  # the turn's prompt was rebuilt (a compaction, a file opened or closed)
            run.turn_system = stored_system_text(state)
        system_text = request_system_text(
            state, run.options.override_system, run.options.client_skills, stored=run.turn_system
        )
        labels = DeltaLabels(
            assistant_id,
            v2=is_v2(agent.agent_type),
            gated=partial(needs_approval, ctx),
            thoughts_in_content=not step_thoughts_in_kwargs(agent, tool_choice if tools else None),
            step_id=step_id,
            use_assistant_message=run.options.use_assistant_message,
        )
        clock.llm_started()
        try:
            async for delta in guarded(
                run.watch,
                call_llm(
                    run.llm,
                    state,
                    system_text,
                    run.pending,
                    tools,
                    tool_choice,
                    run.options.stream_tokens,
                    labels,
                    result_box,
                    site.chat,
                    user=run.options.user_id,
                    sent=sent,
                ),
            ):
                yield delta
            break
        except ContextWindowExceededError as exc:
            if attempt == MAX_OVERFLOW_RETRIES:
                await run.fail_step(step, exc, trace=_trace(run, agent, step_id, exc, sent))
                raise
            fresh.clear()
            async for event in compact(
                run,
                state,
                fresh,
                site,
                trigger="context_window_exceeded",
                force=True,
                complete=bool(run.pending),
            ):
                yield event
            if not fresh:
                await run.fail_step(step, exc, trace=_trace(run, agent, step_id, exc, sent))
                raise  # no turn boundary left to cut at
            state = fresh[-1]
        except Exception as exc:
            await run.fail_step(step, exc, trace=_trace(run, agent, step_id, exc, sent))
            raise
    chat = result_box[0]
    clock.llm_done()
    if chat.logprobs is not None and not is_v2(agent.agent_type):
        run.logprobs = chat.logprobs
    run.add_usage(step, chat.usage, v2=is_v2(agent.agent_type))
    try:
        result = await raced(run.watch, handle_response(ctx, chat, allowed, assistant_id))
    except Exception as exc:  # a cancel during the step's tools: the step (and its tokens) stays on the run
        await run.fail_step(step, exc, trace=_trace(run, agent, step_id, chat, sent))
        raise
    clock.tools_done(ran=bool(result.tools_called))
    outcome.append(result)
    if result.stop_reason == "no_tool_call":
        await run.fail_step(step, None, stop_reason="no_tool_call", trace=_trace(run, agent, step_id, chat, sent))
        return
    step.stop_reason = None if result.should_continue else result.stop_reason
    step.status = "success"
    step.step_metrics = clock.metrics()
    run.tools_used += result.tools_called
    total = int(chat.usage.total_tokens or 0)
    turn_over = not result.should_continue
    compacts_after = total > trigger_threshold(window) and (turn_over or not is_v2(agent.agent_type))
    # A turn that ends with this step (and no compaction after it) closes its run in the step's own transaction.
    ends = turn_stop_reason(result, last=last)
    closing = run.closing(ends) if ends is not None and not compacts_after else None
    committed = await commit_step(
        run.deps.sessionmaker,
        ctx=ctx,
        result=result,
        step=step,
        pending=run.pending,
        num_steps=run.num_steps,
        tools_used=run.tools_used,
        closing=closing,
        trace=_trace(run, agent, step_id, chat, sent),
    )
    if closing is not None and committed.closed:
        run.closed_by(closing)
    run.pending = []
    run.status_read(committed.run_status)
    if ctx.tool_ctx.files_changed:
        # A file's view shows only in the prompt, so the next request sends the rebuilt one; Letta's kept the
        # turn's, and its model could read a file it opened only in the next turn.
        run.turn_system = None
    if committed.remembered is not None:
        run.remember(state, committed.remembered, committed.rows)  # the edit's commit read the new state back
    elif ctx.tool_ctx.memory_changed:
        run.needs_reload = True  # a memory edit written one statement at a time read nothing back: read afresh
    else:
        state.messages.extend(MessageRow.of(row) for row in committed.rows)
    if committed.messages:
        yield ev.MessagesCommitted(committed.messages)
    if compacts_after:
        if run.needs_reload:
            state = await run.next_state(state)
        async for event in compact(
            run,
            state,
            [],
            site,
            trigger="post_step_context_check",
            force=True,
            complete=turn_over,
            tokens_before=total,
        ):
            yield event
