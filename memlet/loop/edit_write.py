"""A memory edit's commit in one statement, with no transaction around it: the common edit (block values changed
by the memory tools, or a passage inserted, in the agent's own thread).

The prompt is compiled from the turn's own blocks (edited in place by the tools) and the numbers read just before
(`agents.prompt_content.prompt_counts`), then `runs.step_write` writes the step, the block values and the system
message together, taking the agent's xact lock itself. The system message is a compare-and-set against the text
the turn last read or wrote: anyone who rewrote it meanwhile (a REST edit of another block, an attached folder, a
compaction) had something new to show, so the step's blocks are still written but its prompt is not, and the
prompt is recompiled at once under the lock from what is stored (`recompile`). A block shared with another agent
and changed by it since the turn's load is caught before anything is written (its `updated_at` against the
turn's); the edit then takes the transaction of `loop/step_writes.write_with_memory`, as do every other memory
change (blocks created, detached or renamed, files opened, an agent with folders) and a conversation's.

Block and system message get the same `updated_at`, so if the process dies between a failed compare-and-set and
the recompile, the next turn's load sees a block newer than the prompt and recompiles it (`refresh_if_stale`).
"""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm.attributes import get_history, set_committed_value

from memlet.agents.prompt_content import PromptCounts, prompt_counts
from memlet.agents.system_message import refresh_system_message
from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import Driver
from memlet.db.locks import agent_xact_lock
from memlet.loop.agent_state import LoopRepository
from memlet.loop.response import StepContext
from memlet.prompt.memory import system_message_text
from memlet.runs.step_write import SystemWrite

_RENAMING = ("label", "description")


def takes_one_statement(ctx: StepContext) -> bool:
    """Whether this step's memory change can be written by `compile_edit` and one statement: block values or
    passages only, in the agent's own thread, with its stored llm_config, and the turn knowing its prompt."""
    tool = ctx.tool_ctx
    system = ctx.system_message
    return (
        ctx.conversation_id is None
        and not ctx.config_overridden
        and not (tool.created or tool.detached or tool.files_changed)
        and system is not None
        and system.role == "system"
        and bool(ctx.agent.message_ids)
        and system.id == ctx.agent.message_ids[0]
        and not any(
            get_history(block, key).has_changes()
            for block in tool.blocks
            if block.id in tool.changed
            for key in _RENAMING
        )
    )


@dataclass(frozen=True)
class CompiledEdit:
    """The statement's `SystemWrite`, the counts the prompt was compiled with and the text."""

    system: SystemWrite
    counts: PromptCounts
    text: str


async def compile_edit(driver: Driver, ctx: StepContext) -> CompiledEdit | None:
    """The recompiled prompt for the step's edit, from the turn's blocks and the counts read now; None when the
    edit needs the transaction after all (folders to show, another writer's block change, the agent gone)."""
    counts = await prompt_counts(driver, ctx.agent.id)
    if counts is None or counts.has_folders:
        return None
    tool, agent = ctx.tool_ctx, ctx.agent
    if not _blocks_as_loaded(counts, tool.blocks, tool.changed):
        return None
    compiled_at = utcnow()
    text = system_message_text(
        agent,
        tool.blocks,
        recall_count=max(counts.message_count - counts.window, 0),
        archival_count=counts.archival_count,
        archival_tags=counts.archival_tags,
        now=compiled_at,
        with_rules=True,
    )
    assert ctx.system_message is not None and agent.message_ids
    edited = tuple((b.id, b.value) for b in tool.blocks if b.id in tool.changed)
    system = SystemWrite(((agent.message_ids[0], text),), compiled_at, ctx.system_message.content, edited)
    return CompiledEdit(system, counts, text)


def _blocks_as_loaded(counts: PromptCounts, blocks: list[orm.Block], changed: set[str]) -> bool:
    """Whether the agent still has the turn's blocks, and the ones the edit did not touch are as the turn loaded
    them (another agent sharing one may have written it since without rewriting this agent's prompt)."""
    stored = counts.block_times
    return len(stored) == len(blocks) and all(
        b.id in stored and (b.id in changed or stored[b.id] == b.updated_at) for b in blocks
    )


def settle(ctx: StepContext, edit: CompiledEdit, rows: int, last_stop_reason: str | None) -> None:
    """Record on the turn's agent and blocks what the statement wrote (the agent's window is the caller's)."""
    agent, compiled_at = ctx.agent, edit.system.compiled_at
    set_committed_value(agent, "system_compiled_at", compiled_at)
    set_committed_value(agent, "message_count", edit.counts.message_count + rows)
    if last_stop_reason is not None:
        set_committed_value(agent, "last_stop_reason", last_stop_reason)
    for block in ctx.tool_ctx.blocks:
        if block.id in ctx.tool_ctx.changed:
            set_committed_value(block, "value", block.value)
            set_committed_value(block, "updated_at", compiled_at)


async def recompile(
    maker: async_sessionmaker[AsyncSession], agent_id: str
) -> tuple[orm.Agent, list[orm.Block], str] | None:
    """Recompile the agent's system message from what is stored, under its xact lock (after a failed
    compare-and-set); the agent, its blocks and the text (None: the agent is gone)."""
    async with maker() as session, session.begin():
        await agent_xact_lock(session, agent_id)
        repo = LoopRepository(session)
        agent = await repo.agents.reload(agent_id)
        if agent is None:
            return None
        blocks = await repo.blocks.of_agent(agent_id)
        text = await refresh_system_message(session, agent, update_timestamp=True, with_rules=True, blocks=blocks)
    return agent, blocks, text
