"""Run the agent loop for one request: steps until a stop reason, yielding `LoopEvent`s.

Transactions: each step loads its state in one short transaction, calls the LLM with no transaction open, then
commits the step (messages, message_ids, block edits, system prompt, step and run rows) in one short transaction
under `pg_advisory_xact_lock`. The whole request holds the agent's session-level advisory lock on a dedicated
connection of the turn engine (`request_lock`, `LoopDeps.turn_engine`), so two requests to one agent never
interleave (a second waits up to `agent_lock_timeout_s`, then gets AgentBusyError). The user's input is written with the first successful step,
so a failed first LLM call leaves no trace but the failed run.

Module map: `deps` (LoopDeps, RunOptions), `run_tracker` (per-request bookkeeping), `step_cycle` (one normal step),
`response` (turning a response into rows), `approvals` (resuming after an approval), `commit` (write transactions),
`cancel` (cancelling runs from the API).
"""

import logging
from collections.abc import AsyncIterator
from dataclasses import replace

from sqlalchemy.ext.asyncio import async_sessionmaker

from memlet import ids
from memlet.agents.system_message import refresh_if_stale as refresh_agent_if_stale
from memlet.conversations.system_message import refresh_if_stale
from memlet.db import models as orm
from memlet.db.engine import autocommit_session
from memlet.db.message_row import MessageLike
from memlet.errors import LLMError
from memlet.llm.chat_format import is_v2
from memlet.llm.errors import LLMEmptyResponseError
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopRepository, LoopState, found_or_404
from memlet.loop.approvals import (
    KEEP_ALIVE,
    answers_group_id,
    approval_items,
    check_approval,
    held_calls,
    only_system_and_summary,
    resume_approval,
)
from memlet.loop.cancel_signal import CancelWatch, RunCancelled, raced
from memlet.loop.commit import commit_step
from memlet.loop.deps import LoopDeps, RunOptions, default_llm_for
from memlet.loop.images import inline_tool_return_images
from memlet.loop.llm_call import stored_system_text
from memlet.loop.request_lock import agent_request_lock, engine_of
from memlet.loop.response import StepResult
from memlet.loop.run_tracker import RunState, turn_stop_reason
from memlet.loop.step_cycle import llm_step
from memlet.loop.summarizer import ContextOverflowError
from memlet.messages.requests import ApprovalCreate, MessageCreate, ToolReturnCreate
from memlet.messages.schemas import StoredMessage
from memlet.runs.run_statements import RunStart
from memlet.tools.solver import ToolRulesSolver

__all__ = ["InputItem", "LoopDeps", "RunOptions", "default_llm_for", "input_row", "run_agent"]

log = logging.getLogger(__name__)
InputItem = MessageCreate | ApprovalCreate | ToolReturnCreate


def input_row(item: MessageCreate, agent: orm.Agent, run_id: str) -> orm.Message:
    """A user/system/assistant input stored verbatim as text (or its content parts)."""
    if isinstance(item.content, str):
        content = [{"type": "text", "text": item.content}]
    else:
        content = [part.model_dump(mode="json") for part in item.content]
    return orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role=item.role,
        content=content,
        name=item.name,
        otid=item.otid,
        sender_id=item.sender_id,
        batch_item_id=item.batch_item_id,
        group_id=item.group_id,
        run_id=run_id,
    )


async def run_agent(
    deps: LoopDeps,
    *,
    agent_id: str,
    actor_org_id: str,
    run_id: str,
    inputs: list[InputItem],
    options: RunOptions,
) -> AsyncIterator[ev.LoopEvent]:
    """Process one request against an agent, yielding events; the last one is RunFinished or RunFailed.

    Raises before the first event: NotFoundError (unknown agent), AgentBusyError (lock wait timed out),
    PendingApprovalError (a normal message while an approval is pending), BadRequestError (an approval that
    matches no pending request).
    """
    engine = deps.turn_engine or engine_of(deps.sessionmaker)
    # One turn at a time per thread: a conversation's own key, or the agent's for its default thread.
    lock_key = options.conversation_id or agent_id
    wait_s = deps.settings.agent_lock_timeout_s if options.lock_wait_s is None else options.lock_wait_s
    watch = CancelWatch(deps.sessionmaker, run_id)  # polls on its own pooled connection, never the locked one
    async with agent_request_lock(engine, lock_key, wait_s) as conn, watch:
        # All of the request's reads and writes go through the connection that holds the lock: one pooled
        # connection per running request, however many steps it takes.
        locked = replace(
            deps,
            sessionmaker=async_sessionmaker(bind=conn, expire_on_commit=False, autoflush=False),
            pooled_sessionmaker=deps.pooled_sessionmaker or deps.sessionmaker,
        )
        async for event in _run_locked(locked, agent_id, actor_org_id, run_id, inputs, options, watch):
            yield event


async def _run_locked(
    deps: LoopDeps,
    agent_id: str,
    org_id: str,
    run_id: str,
    inputs: list[InputItem],
    options: RunOptions,
    watch: CancelWatch | None = None,
) -> AsyncIterator[ev.LoopEvent]:
    # Start the run and load what the first step needs (the start is part of the load's first statement), then check the
    # input against a pending approval. In autocommit: each statement is atomic alone (the reads see what a
    # transaction's would, under the turn's lock), so the BEGIN and COMMIT round trips are spared; the commit below
    # writes a stale prompt's recompile time.
    async with autocommit_session(deps.sessionmaker) as session:
        start = RunStart(
            run_id=run_id,
            agent_id=agent_id,
            organization_id=org_id,
            metadata=options.run_metadata or {"run_type": "send_message"},
            request_config=options.request_config,
            background=options.background,
            worker_id=deps.worker_id,
            lease_s=deps.settings.run_lease_s,
            conversation_id=options.conversation_id,
        )
        loaded, run_status = await LoopRepository(session, deps.window_cache).load_and_start(
            agent_id, org_id, options.conversation_id, start
        )
        state = found_or_404(loaded, agent_id, options.conversation_id)
        if state.agent.message_buffer_autoclear:
            await LoopRepository(session, deps.window_cache).clear_buffer(state)
        if state.conversation is not None and state.messages:
            state.messages[0] = await refresh_if_stale(
                session, state.agent, state.conversation, state.blocks, state.messages[0]
            )
        elif state.messages and state.messages[0].role == "system":
            state.messages[0] = await refresh_agent_if_stale(session, state.agent, state.blocks, state.messages[0])
        answers = approval_items(inputs)
        latest_tool: list[orm.Message] = []
        if answers is not None and only_system_and_summary(state.messages):
            latest_tool = await LoopRepository(session).messages.latest_tool_rows(agent_id)
        approval = check_approval(state, answers, latest_tool)
        solver = ToolRulesSolver.from_stored(state.agent.tool_rules)
        run = RunState(deps, run_id, agent_id, org_id, options, solver, watch=watch)
        run.turn_system = stored_system_text(state) if state.messages else None
        if state.chat is not None:
            run.chat = state.chat  # the thread's conversion, kept from its last turn
        run.pending = [input_row(i, state.agent, run_id) for i in inputs if isinstance(i, MessageCreate)]
        if answers is not None and approval is None and not run.pending:
            run.pending = [input_row(KEEP_ALIVE, state.agent, run_id)]  # answers re-sent after they were applied
        run.approval_items = answers or []
        run.approval_group_id = answers_group_id(inputs)
        run.run_status = run_status
        await session.commit()
    if options.on_started is not None:
        await options.on_started()
    # After the transaction: the override must change the detached row only, never the stored agent.
    state = run.apply_override(state)
    async with deps.llm_for(state.agent.llm_config, org_id) as llm:
        run.llm = llm
        async for event in _steps(run, state, approval):
            yield event


async def _resume(run: RunState, state: LoopState, approval: MessageLike) -> tuple[StepResult, list[StoredMessage]]:
    """Apply the client's approval answers (a step without an LLM call, reusing the request's step id); when they
    end the turn, the run is closed in the same commit."""
    ctx = run.step_context(state, approval.step_id or ids.new_id(ids.Prefix.STEP))
    await inline_tool_return_images(run.approval_items, run.deps.settings)
    answers, result = await raced(
        run.watch, resume_approval(ctx, approval, held_calls(state.messages), run.approval_items, run.approval_group_id)
    )
    run.tools_used += result.tools_called
    closing = None if result.should_continue else run.closing(result.stop_reason or "end_turn")
    committed = await commit_step(
        run.deps.sessionmaker,
        ctx=ctx,
        result=result,
        step=None,
        pending=[answers],  # the client's input: stored, not shown in the response
        num_steps=run.num_steps,
        tools_used=run.tools_used,
        closing=closing,
    )
    if closing is not None and committed.closed:
        run.closed_by(closing)
    run.status_read(committed.run_status)
    return result, committed.messages


def _out_of_steps(run: RunState, state: LoopState) -> str:
    """The stop reason when applying approval answers used the turn's last step and the loop would go on: max_steps,
    but end_turn for a blocking V2 send (Letta's V2 `step()` leaves it unset after a denial, which ends it so)."""
    return "end_turn" if run.options.blocking and is_v2(state.agent.agent_type) else "max_steps"


async def _steps(run: RunState, state: LoopState, approval: MessageLike | None) -> AsyncIterator[ev.LoopEvent]:
    if approval is not None:
        try:
            resumed, committed = await _resume(run, state, approval)
        except RunCancelled:  # cancelled while an approved tool ran: nothing of the answer is written
            yield await run.finish("cancelled")
            return
        yield ev.MessagesCommitted(committed)
        if not resumed.should_continue:
            yield run.closed if run.closed is not None else await run.finish(resumed.stop_reason or "end_turn")
            return
        run.answer_steps = 1  # as in Letta, applying the answers was the loop's first step of max_steps
        if run.options.max_steps <= run.answer_steps:
            yield await run.finish(_out_of_steps(run, state))
            return
        state = await run.load()
    stop_reason = "end_turn"
    for index in range(run.answer_steps, run.options.max_steps):
        if await run.cancelled(fresh=index > 0 or approval is not None):
            yield await run.finish("cancelled")
            return
        outcome: list[StepResult] = []
        last = index == run.options.max_steps - 1
        try:
            async for event in llm_step(run, state, outcome, last=last):
                yield event
        except RunCancelled:
            yield await run.finish("cancelled")
            return
        except ContextOverflowError as exc:
            yield await run.finish("context_window_overflow_in_system_prompt", exc)
            return
        except LLMEmptyResponseError as exc:
            yield await run.finish("invalid_llm_response", exc)
            return
        except LLMError as exc:
            yield await run.finish("llm_api_error", exc)
            return
        except Exception as exc:
            log.exception("agent loop step failed")
            yield await run.finish("error", exc)
            return
        result = outcome[0]
        if result.stop_reason == "no_tool_call":
            error = LLMError("No tool calls found in response, model must make a tool call", error_type="llm_error")
            yield await run.finish("no_tool_call", error)
            return
        if run.closed is not None:  # the step's commit closed the run
            yield run.closed
            return
        if (ends := turn_stop_reason(result, last=last)) is not None:
            stop_reason = ends
            break
        state = await run.next_state(state)
    yield await run.finish(stop_reason)
