"""How a step's rows are written, inside `commit.commit_step`'s transaction (the caller holds the agent's xact
lock): in one statement (`runs.step_write`); with a memory edit, after the blocks and one read of what the prompts
show; or one statement each (more rows than one statement takes, a run error, a conversation's window without a
system message).

Memory-tool edits were made on the step's loaded blocks; they are written here, and the system messages they show
in are recompiled in the same transaction. Concurrent REST edits of the same block between load and commit are
overwritten by the step (last writer wins), as in Letta.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from memlet.agents.prompt_content import agent_with_prompt_content
from memlet.agents.system_message import compile_system_message, directories_text, refresh_system_message
from memlet.conversations.repository import ConversationRepository, with_isolated
from memlet.conversations.system_message import conversation_text_from, refresh_conversation_system_message
from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.loop.agent_state import LoopRepository
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.response import StepContext
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunEnd
from memlet.runs.step_repository import StepRepository
from memlet.runs.step_write import StepWritten, SystemWrite, write_step
from memlet.runs.trace_write import TraceWrite, insert_trace


async def write_memory(session: AsyncSession, agent_id: str, tool_ctx: ToolContext) -> None:
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
class Remembered:
    """After a memory edit, the state its commit read back: the agent row (message_ids, recompile time and message
    count current), its blocks in attachment order (a conversation's isolated copies swapped in), the thread's new
    system prompt text and, in a conversation, the conversation row (its window current). The next step goes on
    from them instead of reloading."""

    agent: orm.Agent
    blocks: list[orm.Block]
    system_text: str
    conversation: orm.Conversation | None = None


# What a commit's writes leave: the thread's window, the run's status and, after a memory edit in the agent's own
# thread, the state the next step goes on from; None when the agent is gone.
Written = tuple[list[str], str | None, Remembered | None] | None


@dataclass(frozen=True)
class StepWrite:
    """What one step's commit writes: in the step's thread (`ctx`), the step row (None: none), its rows (the
    inputs with the step's own), the run's progress and, when the turn ends with this step, the run's end."""

    ctx: StepContext
    step: orm.Step | None
    rows: list[orm.Message]
    num_steps: int
    tools_used: list[str]
    end: RunEnd | None
    trace: TraceWrite | None = None  # the step's provider trace, written with its row

    def statement_args(self) -> dict[str, Any]:
        """`runs.step_write.write_step`'s arguments for this step, in its thread (the agent's or the
        conversation's)."""
        ctx, end = self.ctx, self.end
        return {
            "agent_id": ctx.agent.id,
            "conversation_id": ctx.conversation_id,
            "run_id": ctx.run_id,
            "step": self.step,
            "rows": self.rows,
            "num_steps": self.num_steps,
            "tools_used": self.tools_used,
            "last_stop_reason": end.stop_reason if end is not None else None,
            "end": end,
            "trace": self.trace,
        }


# One way of writing a step's rows, in the caller's transaction.
StepWriter = Callable[[AsyncSession, StepWrite], Awaitable[Written]]


async def _one_statement(session: AsyncSession, write: StepWrite, system: SystemWrite | None = None) -> StepWritten:
    """`runs.step_write` for this step, in the caller's transaction."""
    return await write_step(session, **write.statement_args(), system=system)


async def write_in_one(session: AsyncSession, write: StepWrite) -> Written:
    """The common step (no memory edit): one statement (`runs.step_write`)."""
    written = await _one_statement(session, write)
    return written.message_ids, written.run_status, None


async def write_with_memory(session: AsyncSession, write: StepWrite) -> Written:
    """A memory edit in the agent's own thread: the edited blocks, the agent with what its prompt shows (one read),
    then the step's one statement (`runs.step_write`) with the recompiled system message in it; what the next step
    needs (None: the agent is gone). The agent is read before the step's rows exist; they join both its message
    counter and its window, so the prompt's recall count is the one it will have after them."""
    ctx, end = write.ctx, write.end
    await write_memory(session, ctx.agent.id, ctx.tool_ctx)  # the caller's lock holds the agent row
    found = await agent_with_prompt_content(session, ctx.agent.id)
    if found is None:
        return None
    agent, content = found  # the agent detached: only the statement below writes it
    text = await compile_system_message(
        session, agent, update_timestamp=True, with_rules=True, message_count=agent.message_count, content=content
    )
    compiled_at = agent.system_compiled_at
    assert compiled_at is not None
    system = SystemWrite(((agent.message_ids[0], text),), compiled_at) if agent.message_ids else None
    written = await _one_statement(session, write, system)
    # The entity as the statement left the row (its trigger counted the rows).
    set_committed_value(agent, "system_compiled_at", compiled_at)
    set_committed_value(agent, "message_ids", written.message_ids)
    set_committed_value(agent, "message_count", (agent.message_count or 0) + len(write.rows))
    if end is not None:
        set_committed_value(agent, "last_stop_reason", end.stop_reason)
    return written.message_ids, written.run_status, Remembered(agent, content.blocks, text)


async def write_conversation_memory(session: AsyncSession, write: StepWrite) -> Written:
    """A memory edit in a conversation: the edited blocks, the agent with what its prompt shows and the
    conversation's own prompt parts (two reads), then the step's one statement, which appends to the
    conversation's window and rewrites both system messages (the agent's, with the shared blocks, and the
    conversation's, with its isolated copies). The next step goes on from what it read (`Remembered`; None: the
    agent or conversation is gone).

    Read before the step's rows exist: they join the agent's message counter but not its window (so its recall
    count grows by them), and the conversation's history and window alike (so its recall count stays)."""
    ctx, end = write.ctx, write.end
    assert ctx.conversation_id is not None
    await write_memory(session, ctx.agent.id, ctx.tool_ctx)
    found = await agent_with_prompt_content(session, ctx.agent.id)
    parts = await ConversationRepository(session).prompt_parts(ctx.agent.organization_id, ctx.conversation_id)
    if found is None or parts is None:
        return None
    agent, content = found
    window = parts.conversation.message_ids or []
    if parts.first_role != "system" or not agent.message_ids or window[0] == agent.message_ids[0]:
        # No system message of the conversation's own to rewrite (one is created): the statements one by one.
        return await write_each(session, write, memory_written=True)
    message_count = (agent.message_count or 0) + len(write.rows)
    agent_text = await compile_system_message(
        session, agent, update_timestamp=True, with_rules=True, message_count=message_count, content=content
    )
    assert agent.system_compiled_at is not None
    directories = await directories_text(session, agent, content.folders)
    conversation_text = conversation_text_from(agent, content, parts, directories)
    compiled_at = agent.system_compiled_at
    texts = ((agent.message_ids[0], agent_text), (window[0], conversation_text))
    written = await _one_statement(session, write, SystemWrite(texts, compiled_at))
    # The rows as the statement left them: the agent's counter has the step's rows (its window does not), the
    # conversation's window has them.
    set_committed_value(agent, "system_compiled_at", compiled_at)
    set_committed_value(agent, "message_count", message_count)
    if end is not None:
        set_committed_value(agent, "last_stop_reason", end.stop_reason)
    conversation = parts.conversation
    set_committed_value(conversation, "message_ids", written.message_ids)
    blocks = with_isolated(content.blocks, parts.isolated)
    return written.message_ids, written.run_status, Remembered(agent, blocks, conversation_text, conversation)


async def write_each(session: AsyncSession, write: StepWrite, *, memory_written: bool = False) -> Written:
    """`commit_step`'s writes one statement each (a memory edit in a conversation, more rows than one statement
    takes, a run error): the new message_ids, the run's status and, after a memory edit in the agent's thread,
    what the next step needs; None when the agent is gone."""
    ctx, step, rows, end = write.ctx, write.step, write.rows, write.end
    repo = LoopRepository(session)
    last_stop = end.stop_reason if end is not None else None
    new_ids = [r.id for r in rows]
    if step is not None:
        await StepRepository(session).insert(step)
        if write.trace is not None:
            await insert_trace(session, write.trace, utcnow())
    await repo.messages.add(rows)
    remembered = None
    if ctx.conversation_id is not None:
        message_ids = await _commit_to_conversation(session, ctx, new_ids, memory_written=memory_written)
    elif ctx.tool_ctx.memory_changed:
        # Read after the INSERT of the messages: its message counter is current, so it is passed on as is.
        agent = await repo.agents.reload(ctx.agent.id)
        if agent is None:
            return None
        await write_memory(session, agent.id, ctx.tool_ctx)
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
        ctx.run_id, num_steps=write.num_steps, tools_used=write.tools_used, end=end
    )
    return message_ids, status, remembered


async def _commit_to_conversation(
    session: AsyncSession, ctx: StepContext, new_ids: list[str], *, memory_written: bool = False
) -> list[str]:
    """Append the step's rows to the conversation's window; memory edits are written as for the agent (unless
    `memory_written`: the caller did), and both the agent's system message (shared blocks) and the conversation's
    (its isolated copies, created when the window has none) are rebuilt."""
    assert ctx.conversation_id is not None
    repo = LoopRepository(session)
    message_ids = await repo.conversations.append_message_ids(ctx.conversation_id, new_ids)
    if ctx.tool_ctx.memory_changed:
        agent = await repo.agents.reload(ctx.agent.id)
        conversation = await repo.conversations.find(ctx.agent.organization_id, ctx.conversation_id)
        if agent is not None and conversation is not None:
            if not memory_written:
                await write_memory(session, agent.id, ctx.tool_ctx)
            await refresh_system_message(session, agent, update_timestamp=True, with_rules=True)
            await refresh_conversation_system_message(session, agent, conversation)
    return message_ids
