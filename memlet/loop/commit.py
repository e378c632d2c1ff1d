"""The loop's write transactions: commit one step, or one compaction, atomically under the agent's xact lock.

How a step's rows and memory edits are written inside its transaction is `loop/step_writes.py`.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm.attributes import set_committed_value

from memlet import ids
from memlet.agents.system_message import refresh_system_message
from memlet.conversations.system_message import refresh_conversation_system_message
from memlet.db import models as orm
from memlet.db.driver import lone_statements
from memlet.db.loaded import model_input
from memlet.db.locks import agent_xact_lock, lock_key
from memlet.errors import NotFoundError
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopRepository, LoopState
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.compaction_plan import CompactionPlan
from memlet.loop.deps import OnFinish
from memlet.loop.edit_write import compile_edit, recompile, settle, takes_one_statement
from memlet.loop.response import StepContext, StepResult
from memlet.loop.step_writes import (
    Remembered,
    StepWrite,
    StepWriter,
    write_conversation_memory,
    write_each,
    write_in_one,
    write_memory,
    write_with_memory,
)
from memlet.loop.summarizer import summary_text
from memlet.messages.schemas import StoredMessage
from memlet.runs.run_statements import RunEnd
from memlet.runs.step_write import StepWritten, fits, write_step
from memlet.runs.trace_write import TraceWrite


@dataclass(frozen=True)
class Closing:
    """The end of the run, written by the commit of the step that ends the turn: the run's status, stop reason and
    totals go into the step's UPDATE of the run, the agent's last stop reason into its UPDATE of the agent, and
    `on_finish` (the caller's own writes) runs in that transaction too. No transaction of its own: the step's
    messages and the closed run become visible together, and a crash leaves neither a running run nor half a turn.
    """

    end: RunEnd
    event: ev.RunFinished
    on_finish: OnFinish | None = None


@dataclass
class Committed:
    """What one step's commit wrote: the step's own new messages (as public views need them), every row written
    (inputs included, for the in-memory buffer), the run status read in the same transaction, whether it
    closed the run (its `Closing` was written), and after a memory edit in the agent's thread what it read back."""

    messages: list[StoredMessage]
    rows: list[orm.Message]
    run_status: str | None
    closed: bool = False
    remembered: Remembered | None = None


async def commit_step(
    maker: async_sessionmaker[AsyncSession],
    *,
    ctx: StepContext,
    result: StepResult,
    step: orm.Step | None,
    pending: Sequence[orm.Message],
    num_steps: int,
    tools_used: list[str],
    closing: Closing | None = None,
    trace: TraceWrite | None = None,
) -> Committed:
    """Append `pending` inputs plus the step's rows, extend message_ids, write memory edits, step and run rows;
    with `closing` (the turn ends with this step), close the run in the same statements; `trace`: the step's
    provider trace, written with the step row.

    The common path (no memory edit, no caller's `on_finish`) is one statement (`runs.step_write`), committing by
    itself: it takes the agent's xact lock, then writes the step row, all messages, an atomic append to the thread's
    message_ids (the agent's or the conversation's, with the agent's last stop reason when the turn ends) and the
    run's progress (its end too when the turn ends; it also reads back whether it was cancelled). A deleted agent
    raises NotFoundError. The other paths run in a transaction that first takes the lock with the agent's row held
    against a concurrent delete: a memory edit writes its blocks and reads what the system prompts show, then the
    same one statement rewrites the system messages as well (`step_writes`); the rest write the same rows one
    statement each.
    `ctx.agent.message_ids` is updated in place so the next step can go on without reloading.
    """
    for row in pending:
        row.step_id = ctx.step_id if step is not None else row.step_id
    rows = [*pending, *result.rows]
    if ctx.conversation_id is not None:
        for row in rows:
            row.conversation_id = ctx.conversation_id
    end = closing.end if closing is not None else None
    step_write = StepWrite(ctx, step, rows, num_steps, tools_used, end, trace)
    alone = fits(rows, end) and (closing is None or closing.on_finish is None)
    if alone and not ctx.tool_ctx.memory_changed:
        written = await _write_alone(maker, step_write)
        committed = _views(result)
        if ctx.conversation_id is None:
            ctx.agent.message_ids = written.message_ids
        return Committed(committed, rows, written.run_status, closed=closing is not None)
    if alone and takes_one_statement(ctx):
        edited = await _edit_alone(maker, step_write)
        if edited is not None:
            committed = _views(result)
            status, remembered = edited
            return Committed(committed, rows, status, closed=closing is not None, remembered=remembered)
    async with maker() as session, session.begin():
        if not await LoopRepository(session).agents.lock_for_commit(ctx.agent.id):  # deleted during the turn
            raise NotFoundError("Agent", ctx.agent.id)
        write: StepWriter
        if not fits(rows, end):
            write = write_each
        elif not ctx.tool_ctx.memory_changed:
            write = write_in_one
        else:
            write = write_with_memory if ctx.conversation_id is None else write_conversation_memory
        outcome = await write(session, step_write)
        if outcome is None:  # the agent is gone
            return Committed([], [], None, closed=False)
        message_ids, status, remembered = outcome
        committed = _views(result)
        if closing is not None and closing.on_finish is not None:
            await closing.on_finish(session, closing.event, committed)
        if ctx.conversation_id is None:
            ctx.agent.message_ids = message_ids
    return Committed(committed, rows, status, closed=closing is not None, remembered=remembered)


def _views(result: StepResult) -> list[StoredMessage]:
    """The step's own new messages as public views need them."""
    return [StoredMessage.model_validate(model_input(r)) for r in result.rows]


async def _write_alone(maker: async_sessionmaker[AsyncSession], write: StepWrite) -> StepWritten:
    """The common step's one statement, committing by itself on the turn's connection (no BEGIN, no COMMIT): it
    takes the agent's xact lock itself (`runs.step_write`). A deleted agent fails its messages' foreign key."""
    try:
        async with lone_statements(maker) as driver:
            return await write_step(driver, **write.statement_args(), lock_key=lock_key(write.ctx.agent.id))
    except IntegrityError:
        await _raise_if_deleted(maker, write.ctx.agent.id)
        raise


async def _raise_if_deleted(maker: async_sessionmaker[AsyncSession], agent_id: str) -> None:
    async with maker() as session:
        if await LoopRepository(session).agents.reload(agent_id) is None:  # deleted during the turn
            raise NotFoundError("Agent", agent_id) from None


async def _edit_alone(
    maker: async_sessionmaker[AsyncSession], write: StepWrite
) -> tuple[str | None, Remembered | None] | None:
    """A memory edit's commit as one statement (`loop/edit_write.py`): the run's status and what the next step
    goes on from (None: the agent is gone); None when the edit needs `commit_step`'s transaction after all."""
    ctx, end = write.ctx, write.end
    try:
        async with lone_statements(maker) as driver:
            edit = await compile_edit(driver, ctx)
            if edit is None:
                return None
            key = lock_key(ctx.agent.id)
            args = write.statement_args()
            written = await write_step(driver, **args, system=edit.system, lock_key=key, now=edit.system.compiled_at)
    except IntegrityError:
        await _raise_if_deleted(maker, ctx.agent.id)
        raise
    set_committed_value(ctx.agent, "message_ids", written.message_ids)
    settle(ctx, edit, len(write.rows), end.stop_reason if end is not None else None)
    if written.system_written:
        return written.run_status, Remembered(ctx.agent, ctx.tool_ctx.blocks, edit.text)
    stored = await recompile(maker, ctx.agent.id)  # someone rewrote the prompt meanwhile
    return written.run_status, (Remembered(*stored) if stored is not None else None)


async def commit_memory_edits(maker: async_sessionmaker[AsyncSession], tool_ctx: ToolContext) -> bool:
    """Write memory-tool edits made outside a step (a tool run from the API) and recompile the system message.

    Same transaction shape as a step's commit, without messages: the agent's xact lock, the blocks, then the
    system prompt. Returns False when the agent was deleted meanwhile (nothing is written).
    """
    if not tool_ctx.memory_changed:
        return True
    async with maker() as session, session.begin():
        await agent_xact_lock(session, tool_ctx.agent.id)
        agent = await LoopRepository(session).agents.reload(tool_ctx.agent.id)
        if agent is None:
            return False
        await write_memory(session, agent.id, tool_ctx)
        await refresh_system_message(session, agent, update_timestamp=True, with_rules=True)
    return True


async def commit_compaction(
    maker: async_sessionmaker[AsyncSession],
    *,
    state: LoopState,
    plan: CompactionPlan,
    window: int,
    role: str = "user",
    trigger: str | None = "context_window_exceeded",
    run_id: str | None = None,
    step_id: str | None = None,
) -> StoredMessage | None:
    """Insert the summary right after the system message and shrink message_ids (or, in a conversation, its
    window) to the kept rows. The evicted rows stay in the history, in their original order.

    The summary row has the `user` role, or `summary` when the client asked for compaction messages (as Letta
    stores it then); it is returned for the stream (None when the agent or conversation is gone). Its packed text
    carries Letta's compaction stats under `trigger`; a manual compaction (`trigger` None) carries none.
    """
    agent = state.agent
    conversation = state.conversation
    async with maker() as session, session.begin():
        await agent_xact_lock(session, agent.id)
        repo = LoopRepository(session)
        fresh = await repo.agents.reload(agent.id)
        if fresh is None:
            return None
        current = None
        if conversation is not None:
            current = await repo.conversations.find(agent.organization_id, conversation.id)
            if current is None:
                return None
        stats: dict[str, Any] | None = None
        if trigger is not None:  # a manual compaction carries none, as in Letta
            stats = {
                "trigger": trigger,
                "context_tokens_before": plan.tokens_before,
                "context_tokens_after": plan.tokens_after,
                "context_window": window,
                "messages_count_before": len(state.messages),
                "messages_count_after": len(plan.kept) + 2,
            }
        row = orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            role=role,
            content=[{"type": "text", "text": summary_text(plan.summary, plan.mode, stats, agent.timezone)}],
            created_at=datetime.now(UTC),
            conversation_id=conversation.id if conversation is not None else None,
            run_id=run_id,
            step_id=step_id,
        )
        await repo.messages.add([row])
        stored = StoredMessage.model_validate(model_input(row))
        kept_ids = [r.id for r in plan.kept]
        if conversation is not None and current is not None:
            await repo.conversations.link_messages(conversation.id, [row.id])
            await repo.conversations.set_message_ids(current, [state.messages[0].id, row.id, *kept_ids])
            await refresh_conversation_system_message(session, fresh, current)
            return stored
        system_id = (fresh.message_ids or [state.messages[0].id])[0]
        fresh.message_ids = [system_id, row.id, *kept_ids]
        await session.flush()
        await refresh_system_message(session, fresh, update_timestamp=True, with_rules=True)
    return stored
