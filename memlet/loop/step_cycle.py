"""One normal step of the loop: compact if needed, call the LLM, run the tools, commit the step."""

from collections.abc import AsyncIterator
from typing import Any

from memlet import ids
from memlet.db import models as orm
from memlet.llm.chat_format import is_v2
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopState
from memlet.loop.cancel_signal import guarded, raced
from memlet.loop.commit import commit_compaction, commit_step
from memlet.loop.headroom import DEFAULT_CONTEXT_WINDOW, prompt_budget
from memlet.loop.llm_call import DeltaLabels, call_llm, request_tools, stored_system_text
from memlet.loop.response import StepResult, handle_response, needs_approval
from memlet.loop.run_tracker import RunState
from memlet.loop.summarizer import plan_compaction
from memlet.prompt.skills import with_skills


def _step_row(run: RunState, agent: orm.Agent, step_id: str, window: int) -> orm.Step:
    return orm.Step(
        id=step_id,
        organization_id=run.org_id,
        agent_id=run.agent_id,
        run_id=run.run_id,
        provider_name=agent.llm_config.get("model_endpoint_type"),
        provider_category="base",
        model=agent.llm_config.get("model"),
        model_handle=agent.llm_config.get("handle"),
        model_endpoint=agent.llm_config.get("model_endpoint"),
        context_window_limit=window,
        status="pending",
        tags=[],
    )


async def llm_step(run: RunState, state: LoopState, outcome: list[StepResult]) -> AsyncIterator[ev.LoopEvent]:
    """Run one step, yielding token deltas and the committed messages; `outcome` receives the StepResult.

    Raises what the LLM call raises (the step row is written as failed first) and ContextOverflowError.
    """
    assert run.llm is not None
    agent = state.agent
    tools, allowed, tool_choice = request_tools(state, run.solver, run.options.client_tools)
    window = int(agent.llm_config.get("context_window") or DEFAULT_CONTEXT_WINDOW)
    plan = await plan_compaction(
        llm=run.llm,
        model=str(agent.llm_config.get("model")),
        system=stored_system_text(state),
        rows=state.messages[1:],
        pending=run.pending,
        tools=tools,
        agent_type=agent.agent_type,
        window=window,
        limit=prompt_budget(window, agent.llm_config.get("max_tokens")),
    )
    step_id = ids.new_id(ids.Prefix.STEP)
    if plan is not None:
        shown = run.options.include_compaction_messages
        role = "summary" if shown else "user"
        summary = await commit_compaction(run.deps.sessionmaker, state=state, plan=plan, window=window, role=role)
        state = await run.load()
        run.needs_reload = True
        if summary is not None:
            if shown:
                yield ev.CompactionStarted(step_id, "context_window_exceeded", plan.tokens_before, window)
            yield ev.MessagesCommitted([summary.model_copy(update={"step_id": step_id})])
    ctx = run.step_context(state, step_id)
    step = _step_row(run, agent, step_id, window)
    assistant_id = ids.new_id(ids.Prefix.MESSAGE)
    result_box: list[Any] = []
    system_text = with_skills(stored_system_text(state), state.blocks, run.options.client_skills)
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
                DeltaLabels(assistant_id, v2=is_v2(agent.agent_type), gated=lambda name: needs_approval(ctx, name)),
                result_box,
            ),
        ):
            yield delta
    except Exception as exc:
        await run.fail_step(step, exc)
        raise
    chat = result_box[0]
    run.add_usage(step, chat.usage)
    result = await raced(run.watch, handle_response(ctx, chat, allowed, assistant_id))
    outcome.append(result)
    if result.stop_reason == "no_tool_call":
        await run.fail_step(step, None, stop_reason="no_tool_call")
        return
    step.stop_reason = None if result.should_continue else result.stop_reason
    step.status = "success"
    run.tools_used += result.tools_called
    committed = await commit_step(
        run.deps.sessionmaker,
        ctx=ctx,
        result=result,
        step=step,
        pending=run.pending,
        num_steps=run.steps,
        tools_used=run.tools_used,
    )
    run.pending = []
    run.run_status = committed.run_status
    if ctx.tool_ctx.memory_changed:
        run.needs_reload = True  # blocks and the system prompt changed: the next step reads them afresh
    else:
        state.messages.extend(committed.rows)
    if committed.messages:
        yield ev.MessagesCommitted(committed.messages)
