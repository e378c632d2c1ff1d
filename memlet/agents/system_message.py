"""The agent's compiled system message, stored in place.

The system message is always `agent.message_ids[0]`; rewriting it keeps the same message id (Letta does the same),
so clients that cached the id still find it.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from memlet.agents.prompt_content import PromptContent, prompt_contents
from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.folders import line_view
from memlet.folders.agent_files import file_limits
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.repository import FolderRepository
from memlet.messages.repository import MessageRepository
from memlet.passages.repository import PassageRepository
from memlet.prompt.directories import PromptFile, PromptFolder, render_directories
from memlet.prompt.memory import system_message_text
from memlet.prompt.system_prompt import AGENT_TYPES_WITHOUT_BLOCKS


async def directories_text(session: AsyncSession, agent: orm.Agent, folders: list[orm.Source] | None = None) -> str:
    """The agent's `<directories>` section: its folders (read here unless given) and the file blocks of their
    files ("" without any)."""
    if folders is None:
        folders = await FolderRepository(session).of_agent(agent.id)
    if not folders:
        return ""
    max_open, char_limit = file_limits(agent)
    files = [
        PromptFile(
            r.source_id, r.file_name, line_view.truncate_view(r.visible_content, r.is_open, char_limit), char_limit
        )
        for r in await FileAgentRepository(session).of_agent(agent.id)
    ]
    shown = [PromptFolder(f.id, f.name, f.description, f.instructions) for f in folders]
    return render_directories(shown, files, max_open, nested=agent.agent_type in AGENT_TYPES_WITHOUT_BLOCKS)


async def rebuild_prompts(session: AsyncSession, agents: Sequence[orm.Agent]) -> None:
    """`PromptRebuilder` for lower domains: recompile after a memory change, keeping the recompile time.

    The text is Letta's rebuild (`rebuild_system_prompt_async`), not its first compile: the tool-rule section and,
    for Anthropic models, line-numbered block values.

    The lower domains load the agents to rebuild in one query for the change, so each row's message counter is
    current and used as is. What the prompts show is read for all of them in one statement, and the new texts
    written in one: two statements whatever the number of agents (plus the file blocks of agents with folders).
    """
    if not agents:
        return
    await session.flush()  # the read below goes to the driver, past the session's autoflush
    contents = await prompt_contents(session, [agent.id for agent in agents])
    texts: list[tuple[str, str, str]] = []
    for agent in agents:
        content = contents.get(agent.id)
        if content is None or not agent.message_ids:
            continue
        text = await compile_system_message(
            session, agent, update_timestamp=False, with_rules=True, message_count=agent.message_count, content=content
        )
        texts.append((agent.id, agent.message_ids[0], text))
    await MessageRepository(session).set_system_texts(texts)


async def refresh_system_message(
    session: AsyncSession,
    agent: orm.Agent,
    *,
    update_timestamp: bool,
    with_rules: bool = False,
    message_count: int | None = None,
    blocks: list[orm.Block] | None = None,
) -> str:
    """Recompile the agent's system message (`compile_system_message`) and write it into `agent.message_ids[0]`;
    returns the text. Runs in the caller's transaction and never commits."""
    text = await compile_system_message(
        session,
        agent,
        update_timestamp=update_timestamp,
        with_rules=with_rules,
        message_count=message_count,
        blocks=blocks,
    )
    if agent.message_ids:
        await MessageRepository(session).set_content(agent.id, agent.message_ids[0], [{"type": "text", "text": text}])
    return text


async def compile_system_message(
    session: AsyncSession,
    agent: orm.Agent,
    *,
    update_timestamp: bool,
    with_rules: bool = False,
    message_count: int | None = None,
    blocks: list[orm.Block] | None = None,
    content: PromptContent | None = None,
) -> str:
    """The agent's system message text as it is now; writes nothing but `agent.system_compiled_at` on the entity.
    `content`: what the prompt shows as the caller has just read it in this transaction (`agents.prompt_content`),
    instead of `blocks` (then nothing is read here but the file blocks of its folders, when it has any).

    Blocks come in attachment order; the recall count is every stored message of the agent minus the in-context
    ones; the archival lines count the passages (and list the tags) of every archive attached to the agent.
    The "last recompiled" time moves only when `update_timestamp` is set (or was never set). `message_count` is the
    agent's stored message count when the caller's row is known to be current (else it is read); the recall count
    is the same before and after a step's rows are appended to both. `blocks`: the agent's blocks as the caller
    has just read them in this transaction (`BlockRepository.of_agent`), else they are read here.
    """
    messages = MessageRepository(session)
    if content is not None:
        blocks = content.blocks
    elif blocks is None:
        blocks = await BlockRepository(session).of_agent(agent.id)
    total = message_count if message_count is not None else await messages.count_for_agent(agent.id)
    recall_count = max(total - len(agent.message_ids or []), 0)
    if content is not None:
        archival_count, archival_tags = content.archival_count, content.archival_tags
    else:
        archival_count, archival_tags = await PassageRepository(session).agent_count_and_tags(
            agent.organization_id, agent.id
        )
    if update_timestamp or agent.system_compiled_at is None:
        agent.system_compiled_at = datetime.now(UTC)
    return system_message_text(
        agent,
        blocks,
        recall_count=recall_count,
        archival_count=archival_count,
        archival_tags=archival_tags,
        now=agent.system_compiled_at,
        with_rules=with_rules,
        directories=await directories_text(session, agent, content.folders if content is not None else None),
    )


async def refresh_if_stale(
    session: AsyncSession, agent: orm.Agent, blocks: list[orm.Block], system: MessageRow
) -> MessageRow:
    """Recompile the agent's system message when a block it shows changed since it was written (an edit by
    another agent sharing the block, such as its sleeptime agent); the row as it is now."""
    newest = max((b.updated_at for b in blocks if b.updated_at is not None), default=None)
    if newest is None or system.updated_at is None or newest <= system.updated_at:
        return system
    # As Letta rebuilds every other holder of a block an agent's memory tool edited (`update_block_async`, with
    # `update_timestamp=False`): the tool-rule section, and the prompt's last recompile time kept (Letta showed the
    # system message's creation time; README "Blocks and the prompt"). The loop's agent is detached
    # (`AgentRepository.find_with_memory`): the time is read from the session's own row and copied onto the caller's.
    stored = await AgentRepository(session).find(agent.organization_id, agent.id)
    await refresh_system_message(session, stored or agent, update_timestamp=False, with_rules=True)
    set_committed_value(agent, "system_compiled_at", (stored or agent).system_compiled_at)
    return next(iter(await MessageRepository(session).in_context(agent.id, [system.id])), system)
