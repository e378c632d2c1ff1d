"""The loop's write transactions: commit one step, or one compaction, atomically under the agent's xact lock.

Memory-tool edits were made on the step's loaded blocks; they are written here, in the same transaction as the
step's messages, and the system message is recompiled in that transaction too. Concurrent REST edits of the same
block between load and commit are overwritten by the step (last writer wins), as in Letta.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm.attributes import set_committed_value

from memlet import ids
from memlet.agents.prompt_content import agent_with_prompt_content
from memlet.agents.system_message import compile_system_message, refresh_system_message
from memlet.conversations.system_message import refresh_conversation_system_message
from memlet.db import models as orm
from memlet.db.locks import agent_xact_lock
from memlet.errors import NotFoundError
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopRepository, LoopState
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.compaction_plan import CompactionPlan
from memlet.loop.deps import OnFinish
from memlet.loop.response import StepContext, StepResult
from memlet.loop.summarizer import summary_text
from memlet.messages.schemas import StoredMessage
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunEnd
from memlet.runs.step_repository import StepRepository
from memlet.runs.step_write import SystemWrite, fits, write_step


async def _write_memory(session: AsyncSession, agent_id: str, tool_ctx: ToolContext) -> None:
    """Write the blocks a memory tool created, changed or detached (the caller holds the agent's xact lock)."""
    repo = LoopRepository(session)
    created = {b.id for b in tool_ctx.created}
    for offset, block in enumerate(tool_ctx.created):
        # After every existing attachment; positions only need to sort, not to be dense.
        await repo.blocks.attach_new(agent_id, block, position=len(tool_ctx.blocks) + 1000 + offset)
    for block in tool_ctx.blocks:
        if block.id in tool_ctx.changed and block.id not in created:
            await repo.blocks.save_for_agent(agent_id, block)
    for block_id in tool_ctx.detached:
        await repo.blocks.detach(agent_id, block_id)
    await session.flush()


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


@dataclass(frozen=True)
class Remembered:
    """After a memory edit in the agent's own thread, the state its commit read back: the agent row (message_ids,
    recompile time and message count current), its blocks in attachment order and the new system prompt text. The
    next step goes on from them instead of reloading."""

    agent: orm.Agent
    blocks: list[orm.Block]
    system_text: str


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
) -> Committed:
    """Append `pending` inputs plus the step's rows, extend message_ids, write memory edits, step and run rows;
    with `closing` (the turn ends with this step), close the run in the same statements.

    The common path (no memory edit) is two statements: the agent's xact lock taken with its row held against a
    concurrent delete (a deleted agent raises NotFoundError), then one statement (`runs.step_write`) writing the
    step row, all messages, an atomic append to the thread's message_ids (the agent's or the conversation's, with
    the agent's last stop reason when the turn ends) and the run's progress (its end too when the turn ends; it
    also reads back whether it was cancelled). A memory edit in the agent's own thread writes its blocks and reads
    what the system prompt shows first, then the same one statement rewrites the system message as well
    (`_write_with_memory`). The other paths write the same rows one statement each.
    `ctx.agent.message_ids` is updated in place so the next step can go on without reloading.
    """
    for row in pending:
        row.step_id = ctx.step_id if step is not None else row.step_id
    rows = [*pending, *result.rows]
    if ctx.conversation_id is not None:
        for row in rows:
            row.conversation_id = ctx.conversation_id
    end = closing.end if closing is not None else None
    async with maker() as session, session.begin():
        if not await LoopRepository(session).agents.lock_for_commit(ctx.agent.id):  # deleted during the turn
            raise NotFoundError("Agent", ctx.agent.id)
        if not fits(rows, end) or (ctx.tool_ctx.memory_changed and ctx.conversation_id is not None):
            write = _write_each
        else:
            write = _write_with_memory if ctx.tool_ctx.memory_changed else _write_in_one
        outcome = await write(session, ctx, step, rows, num_steps, tools_used, end)
        if outcome is None:  # the agent is gone
            return Committed([], [], None, closed=False)
        message_ids, status, remembered = outcome
        committed = [StoredMessage.model_validate(r) for r in result.rows]
        if closing is not None and closing.on_finish is not None:
            await closing.on_finish(session, closing.event, committed)
        if ctx.conversation_id is None:
            ctx.agent.message_ids = message_ids
    return Committed(committed, rows, status, closed=closing is not None, remembered=remembered)


# What a commit's writes leave: the thread's window, the run's status and, after a memory edit in the agent's own
# thread, the state the next step goes on from; None when the agent is gone.
Written = tuple[list[str], str | None, Remembered | None] | None


async def _write_in_one(
    session: AsyncSession,
    ctx: StepContext,
    step: orm.Step | None,
    rows: list[orm.Message],
    num_steps: int,
    tools_used: list[str],
    end: RunEnd | None,
) -> Written:
    """The common step (no memory edit): one statement (`runs.step_write`)."""
    written = await write_step(
        session,
        agent_id=ctx.agent.id,
        conversation_id=ctx.conversation_id,
        run_id=ctx.run_id,
        step=step,
        rows=rows,
        num_steps=num_steps,
        tools_used=tools_used,
        last_stop_reason=end.stop_reason if end is not None else None,
        end=end,
    )
    return written.message_ids, written.run_status, None


async def _write_with_memory(
    session: AsyncSession,
    ctx: StepContext,
    step: orm.Step | None,
    rows: list[orm.Message],
    num_steps: int,
    tools_used: list[str],
    end: RunEnd | None,
) -> Written:
    """A memory edit in the agent's own thread: the edited blocks, the agent with what its prompt shows (one read),
    then the step's one statement (`runs.step_write`) with the recompiled system message in it; what the next step
    needs (None: the agent is gone). The agent is read before the step's rows exist; they join both its message
    counter and its window, so the prompt's recall count is the one it will have after them."""
    await _write_memory(session, ctx.agent.id, ctx.tool_ctx)  # the caller's lock holds the agent row
    found = await agent_with_prompt_content(session, ctx.agent.id)
    if found is None:
        return None
    agent, content = found  # the agent detached: only the statement below writes it
    text = await compile_system_message(
        session, agent, update_timestamp=True, with_rules=True, message_count=agent.message_count, content=content
    )
    compiled_at = agent.system_compiled_at
    assert compiled_at is not None
    last_stop = end.stop_reason if end is not None else None
    written = await write_step(
        session,
        agent_id=agent.id,
        conversation_id=None,
        run_id=ctx.run_id,
        step=step,
        rows=rows,
        num_steps=num_steps,
        tools_used=tools_used,
        last_stop_reason=last_stop,
        end=end,
        system=SystemWrite(agent.message_ids[0], text, compiled_at) if agent.message_ids else None,
    )
    # The entity as the statement left the row (its trigger counted the rows).
    set_committed_value(agent, "system_compiled_at", compiled_at)
    set_committed_value(agent, "message_ids", written.message_ids)
    set_committed_value(agent, "message_count", (agent.message_count or 0) + len(rows))
    if last_stop is not None:
        set_committed_value(agent, "last_stop_reason", last_stop)
    return written.message_ids, written.run_status, Remembered(agent, content.blocks, text)


async def _write_each(
    session: AsyncSession,
    ctx: StepContext,
    step: orm.Step | None,
    rows: list[orm.Message],
    num_steps: int,
    tools_used: list[str],
    end: RunEnd | None,
) -> Written:
    """`commit_step`'s writes one statement each (a memory edit in a conversation, more rows than one statement
    takes, a run error): the new message_ids, the run's status and, after a memory edit in the agent's thread,
    what the next step needs; None when the agent is gone."""
    repo = LoopRepository(session)
    last_stop = end.stop_reason if end is not None else None
    new_ids = [r.id for r in rows]
    if step is not None:
        await StepRepository(session).insert(step)
    await repo.messages.add(rows)
    remembered = None
    if ctx.conversation_id is not None:
        message_ids = await _commit_to_conversation(session, ctx, new_ids)
    elif ctx.tool_ctx.memory_changed:
        # Read after the INSERT of the messages: its message counter is current, so it is passed on as is.
        agent = await repo.agents.reload(ctx.agent.id)
        if agent is None:
            return None
        await _write_memory(session, agent.id, ctx.tool_ctx)
        blocks = await repo.blocks.of_agent(agent.id)
        with session.no_autoflush:  # message_ids and system_compiled_at go out in one UPDATE of the agent
            agent.message_ids = [*(agent.message_ids or []), *new_ids]
            text = await refresh_system_message(
                session,
                agent,
                update_timestamp=True,
                with_rules=True,
                message_count=agent.message_count,
                blocks=blocks,
            )
        await session.flush()
        message_ids = list(agent.message_ids)
        remembered = Remembered(agent, blocks, text)
    else:
        message_ids = await repo.agents.append_message_ids(ctx.agent.id, new_ids, last_stop_reason=last_stop)
    if last_stop is not None and (ctx.conversation_id is not None or ctx.tool_ctx.memory_changed):
        await repo.agents.set_last_stop_reason(ctx.agent.id, last_stop)  # not written with message_ids above
    status = await RunRepository(session).record_progress(
        ctx.run_id, num_steps=num_steps, tools_used=tools_used, end=end
    )
    return message_ids, status, remembered


async def _commit_to_conversation(session: AsyncSession, ctx: StepContext, new_ids: list[str]) -> list[str]:
    """Append the step's rows to the conversation's window; memory edits are written as for the agent, and
    both the agent's system message (shared blocks) and the conversation's (its isolated copies) are rebuilt."""
    assert ctx.conversation_id is not None
    repo = LoopRepository(session)
    message_ids = await repo.conversations.append_message_ids(ctx.conversation_id, new_ids)
    if ctx.tool_ctx.memory_changed:
        agent = await repo.agents.reload(ctx.agent.id)
        conversation = await repo.conversations.find(ctx.agent.organization_id, ctx.conversation_id)
        if agent is not None and conversation is not None:
            await _write_memory(session, agent.id, ctx.tool_ctx)
            await refresh_system_message(session, agent, update_timestamp=True, with_rules=True)
            await refresh_conversation_system_message(session, agent, conversation)
    return message_ids


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
        await _write_memory(session, agent.id, tool_ctx)
        await refresh_system_message(session, agent, update_timestamp=True, with_rules=True)
    return True


async def commit_compaction(
    maker: async_sessionmaker[AsyncSession],
    *,
    state: LoopState,
    plan: CompactionPlan,
    window: int,
    role: str = "user",
    trigger: str = "context_window_exceeded",
    run_id: str | None = None,
    step_id: str | None = None,
) -> StoredMessage | None:
    """Insert the summary right after the system message and shrink message_ids (or, in a conversation, its
    window) to the kept rows. The evicted rows stay in the history, in their original order.

    The summary row has the `user` role, or `summary` when the client asked for compaction messages (as Letta
    stores it then); it is returned for the stream (None when the agent or conversation is gone).
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
        stats: dict[str, Any] = {
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
            content=[{"type": "text", "text": summary_text(plan.summary, plan.evicted_count, stats, agent.timezone)}],
            created_at=datetime.now(UTC),
            conversation_id=conversation.id if conversation is not None else None,
            run_id=run_id,
            step_id=step_id,
        )
        await repo.messages.add([row])
        stored = StoredMessage.model_validate(row)
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
