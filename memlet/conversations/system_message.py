"""A conversation's own system message: compiled with its isolated blocks and `CONVERSATION_ID: conv-…`.

It is `conversation.message_ids[0]`; rewriting keeps the message id. Unlike Letta, memlet also recompiles it
after a memory edit made inside the conversation and when recompiling (with the isolated copies, not the shared
blocks, and the real conversation id).
"""

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.agents.prompt_content import PromptContent
from memlet.agents.system_message import directories_text
from memlet.blocks.repository import BlockRepository
from memlet.conversations.repository import ConversationRepository, PromptParts, with_isolated
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.messages.repository import MessageRepository
from memlet.passages.repository import PassageRepository
from memlet.prompt.memory import system_message_text


async def conversation_system_text(
    session: AsyncSession, agent: orm.Agent, conversation: orm.Conversation, *, opening: bool = False
) -> str:
    """The conversation's system prompt as it would be compiled now (pure read).

    `opening`: the first one, written when the conversation is created or forked, compiled as Letta compiles it
    then: without tool rules or line numbers, no archival tags, and the agent's whole message count as the
    previous messages. Later ones (after a memory edit, a recompile) are compiled as the loop's rebuilds are."""
    repo = ConversationRepository(session)
    blocks = with_isolated(await BlockRepository(session).of_agent(agent.id), await repo.blocks_of(conversation.id))
    archival_count, archival_tags = await PassageRepository(session).agent_count_and_tags(
        agent.organization_id, agent.id
    )
    if opening:
        recall = await MessageRepository(session).count_for_agent(agent.id)
    else:
        recall = max(await repo.history_count(conversation.id) - len(conversation.message_ids or []), 0)
    return system_message_text(
        agent,
        blocks,
        recall_count=recall,
        archival_count=archival_count,
        archival_tags=() if opening else archival_tags,
        now=datetime.now(UTC),
        with_rules=not opening,
        conversation_id=conversation.id,
        directories=await directories_text(session, agent),
    )


def conversation_text_from(agent: orm.Agent, content: PromptContent, parts: PromptParts, directories: str) -> str:
    """`conversation_system_text` from what the caller has just read (`agents.prompt_content`,
    `ConversationRepository.prompt_parts`) in this transaction (pure)."""
    window = parts.conversation.message_ids or []
    return system_message_text(
        agent,
        with_isolated(content.blocks, parts.isolated),
        recall_count=max(parts.history_count - len(window), 0),
        archival_count=content.archival_count,
        archival_tags=content.archival_tags,
        now=datetime.now(UTC),
        with_rules=True,
        conversation_id=parts.conversation.id,
        directories=directories,
    )


async def refresh_conversation_system_message(
    session: AsyncSession, agent: orm.Agent, conversation: orm.Conversation, *, opening: bool = False
) -> str:
    """Recompile and store the conversation's system message (created when the window has none); the text.
    `opening` as in `conversation_system_text`."""
    text = await conversation_system_text(session, agent, conversation, opening=opening)
    content = [{"type": "text", "text": text}]
    messages = MessageRepository(session)
    window = list(conversation.message_ids or [])
    found = await messages.by_ids(agent.id, window[:1])
    if found and found[0].role == "system":
        first = found[0]
        await messages.set_content(agent.id, first.id, content)
        return text
    row = orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role="system",
        content=content,
        conversation_id=conversation.id,
        model=(agent.llm_config or {}).get("model"),
    )
    await messages.add([row])
    repo = ConversationRepository(session)
    await repo.link_messages(conversation.id, [row.id])
    await repo.set_message_ids(conversation, [row.id, *window])
    return text


async def refresh_if_stale(
    session: AsyncSession,
    agent: orm.Agent,
    conversation: orm.Conversation,
    blocks: list[orm.Block],
    system: MessageRow,
) -> MessageRow:
    """Recompile the conversation's system message when a block it shows changed since it was written (an edit
    from another conversation, the agent's own thread or the REST API).

    Letta keeps a conversation's prompt as a snapshot until compaction or recompile; memlet shows shared-block
    edits to every conversation at its next turn. Returns the row as it is now.
    """
    newest = max((b.updated_at for b in blocks if b.updated_at is not None), default=None)
    if newest is None or system.updated_at is None or newest <= system.updated_at:
        return system
    await refresh_conversation_system_message(session, agent, conversation)
    return next(iter(await MessageRepository(session).in_context(agent.id, [system.id])), system)
