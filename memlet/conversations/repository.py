"""SQL for conversations, their history links and their isolated blocks. Never commits."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    String,
    bindparam,
    case,
    delete,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from memlet.agents.repository import WITH_MEMORY_COLUMNS, AgentWithMemory, with_memory
from memlet.blocks.repository import BLOCK_ROWS
from memlet.db import models as orm
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.pagination import Page, fetch_page
from memlet.db.row_shape import RowShape

C = orm.Conversation
M = orm.Message
CONVERSATION_ROWS = RowShape(orm.Conversation)
# A turn's load of its conversation: the row and its isolated blocks (`blocks_of`'s order) in one statement on the
# driver, built into detached ORM rows.
_ISOLATED_BLOCKS = (
    select(func.array_agg(aggregate_order_by(BLOCK_ROWS.row(), orm.ConversationBlock.block_label)))
    .join_from(orm.ConversationBlock, orm.Block, orm.ConversationBlock.block_id == orm.Block.id)
    .where(orm.ConversationBlock.conversation_id == C.id)
    .scalar_subquery()
)
# A turn's load in a conversation: the agent with its blocks and tools, the conversation and its isolated blocks
# (`with_agent` reads them back from a row).
WITH_AGENT_READ = (
    select(*WITH_MEMORY_COLUMNS, *CONVERSATION_ROWS.columns, _ISOLATED_BLOCKS)
    .join_from(C, orm.Agent, orm.Agent.id == C.agent_id)
    .where(
        C.id == bindparam("conversation_id"),
        C.organization_id == bindparam("org_id"),
        orm.Agent.id == bindparam("agent_id"),
    )
)
_WITH_AGENT = DriverSQL(WITH_AGENT_READ)
# What a conversation's own system prompt needs besides the agent's: the row, its isolated blocks, how many messages
# its history links and the role of the first message of its window (its system message, normally).
_PROMPT_PARTS = DriverSQL(
    select(
        *CONVERSATION_ROWS.columns,
        _ISOLATED_BLOCKS,
        select(func.count())
        .select_from(orm.ConversationMessage)
        .where(orm.ConversationMessage.conversation_id == C.id)
        .scalar_subquery(),
        select(M.role).where(M.id == C.message_ids[1], M.agent_id == C.agent_id).scalar_subquery(),
    ).where(C.id == bindparam("conversation_id"), C.organization_id == bindparam("org_id"))
)


@dataclass(frozen=True)
class PromptParts:
    """`ConversationRepository.prompt_parts`: the conversation (detached), its isolated blocks, its history count
    and the role of its window's first message (None: an empty window)."""

    conversation: orm.Conversation
    isolated: list[orm.Block]
    history_count: int
    first_role: str | None


_FAR_PAST = datetime.fromisoformat("0001-01-02T00:00:00+00:00")
_FAR_FUTURE = datetime.fromisoformat("9999-12-30T00:00:00+00:00")


def with_agent(row: Sequence[Any]) -> tuple[AgentWithMemory, orm.Conversation, list[orm.Block]]:
    """The detached agent with its memory, conversation and isolated blocks of a row of `WITH_AGENT_READ`."""
    width = len(WITH_MEMORY_COLUMNS)
    conversation = CONVERSATION_ROWS.detached(row[width:])
    return with_memory(row), conversation, BLOCK_ROWS.detached_all(row[width + len(CONVERSATION_ROWS)])


class ConversationRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, conversation: orm.Conversation) -> None:
        self.session.add(conversation)
        await self.session.flush()

    async def find(self, org_id: str, conversation_id: str, *, for_update: bool = False) -> orm.Conversation | None:
        stmt = select(C).where(C.id == conversation_id, C.organization_id == org_id)
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt.execution_options(populate_existing=True))

    async def find_with_agent(
        self, org_id: str, conversation_id: str, agent_id: str
    ) -> tuple[AgentWithMemory, orm.Conversation, list[orm.Block]] | None:
        """The agent with its memory (`AgentRepository.find_with_memory`), the conversation and its isolated blocks
        (`blocks_of`), in one statement (detached rows: they never enter the session); None unless the conversation
        is the agent's."""
        driver = await driver_of(self.session)
        params = {"conversation_id": conversation_id, "org_id": org_id, "agent_id": agent_id}
        row = await driver.fetchrow(_WITH_AGENT, params)
        return None if row is None else with_agent(row)

    async def prompt_parts(self, org_id: str, conversation_id: str) -> PromptParts | None:
        """What the conversation's own system prompt needs, in one statement on the driver."""
        driver = await driver_of(self.session)
        row = await driver.fetchrow(_PROMPT_PARTS, {"conversation_id": conversation_id, "org_id": org_id})
        if row is None:
            return None
        width = len(CONVERSATION_ROWS)
        isolated, count, role = row[width], row[width + 1], row[width + 2]
        return PromptParts(CONVERSATION_ROWS.detached(row), BLOCK_ROWS.detached_all(isolated), int(count or 0), role)

    async def delete(self, conversation_id: str) -> None:
        await self.session.execute(delete(C).where(C.id == conversation_id))

    def _sort_key(self, order_by: str, descending: bool) -> ColumnElement[Any]:
        if order_by == "created_at":
            return C.created_at  # type: ignore[return-value]
        if order_by == "last_message_at":
            column: Any = C.last_message_at
        else:
            column = select(func.max(orm.Run.completed_at)).where(orm.Run.conversation_id == C.id).scalar_subquery()
        # Nulls last in either order.
        return func.coalesce(column, _FAR_PAST if descending else _FAR_FUTURE)

    async def list_page(
        self,
        org_id: str,
        page: Page,
        *,
        agent_id: str | None,
        summary_search: str | None,
        order_by: str,
        archived: bool | None = None,
    ) -> list[orm.Conversation]:
        stmt = select(C).where(C.organization_id == org_id)
        if archived is not None:
            stmt = stmt.where(C.archived.is_(archived))
        if agent_id:
            stmt = stmt.where(C.agent_id == agent_id)
        if summary_search:
            stmt = stmt.where(func.strpos(C.summary, summary_search) > 0)  # case-sensitive, as Letta
        key = self._sort_key(order_by, page.descending)
        return await fetch_page(self.session, stmt, page, sort_col=key, id_col=C.id)

    async def exists(self, org_id: str, conversation_id: str) -> bool:
        found = await self.session.scalar(select(C.id).where(C.id == conversation_id, C.organization_id == org_id))
        return found is not None

    # The in-context window.

    async def append_message_ids(self, conversation_id: str, message_ids: Sequence[str]) -> list[str]:
        """Append to the conversation's window atomically (and link the rows to its history); the whole list."""
        await self.link_messages(conversation_id, message_ids)
        result = await self.session.scalar(
            update(C)
            .where(C.id == conversation_id)
            .values(message_ids=C.message_ids.op("||")(literal(list(message_ids), ARRAY(String))))
            .returning(C.message_ids)
            .execution_options(synchronize_session=False)
        )
        return list(result or [])

    async def set_message_ids(self, conversation: orm.Conversation, message_ids: Sequence[str]) -> None:
        """Replace the window, by statement: `conversation` may be a detached row (a turn's load)."""
        window = list(message_ids)
        await self.session.execute(
            update(C)
            .where(C.id == conversation.id)
            .values(message_ids=window)
            .execution_options(synchronize_session=False)
        )
        set_committed_value(conversation, "message_ids", window)

    # History.

    async def link_messages(self, conversation_id: str, message_ids: Sequence[str]) -> None:
        if not message_ids:
            return
        rows = [{"conversation_id": conversation_id, "message_id": m} for m in message_ids]
        await self.session.execute(insert(orm.ConversationMessage).values(rows).on_conflict_do_nothing())

    def _history(self, conversation_id: str) -> Any:
        linked = select(orm.ConversationMessage.message_id).where(
            orm.ConversationMessage.conversation_id == conversation_id
        )
        return select(M).where(M.id.in_(linked))

    async def history_page(
        self, conversation_id: str, page: Page, *, group_id: str | None, system_id: str | None
    ) -> list[orm.Message]:
        """The conversation's whole history (in context or not): its system message first (a fork's is newer than
        the rows it shares), then `sequence_id` order, which is append-only and never renumbered."""
        stmt = self._history(conversation_id)
        if group_id:
            stmt = stmt.where(M.group_id == group_id)
        key = case((M.id == system_id, literal(0, BigInteger)), else_=M.sequence_id) if system_id else M.sequence_id
        return await fetch_page(self.session, stmt, page, sort_col=key, id_col=M.id)

    async def in_history(self, conversation_id: str, message_id: str) -> bool:
        found = await self.session.scalar(
            select(orm.ConversationMessage.message_id).where(
                orm.ConversationMessage.conversation_id == conversation_id,
                orm.ConversationMessage.message_id == message_id,
            )
        )
        return found is not None

    async def history_count(self, conversation_id: str) -> int:
        count = await self.session.scalar(
            select(func.count()).where(orm.ConversationMessage.conversation_id == conversation_id)
        )
        return int(count or 0)

    async def delete_own_messages(self, conversation_id: str) -> None:
        """Delete the messages that originated here, unless another conversation still links them (a fork)."""
        shared = select(orm.ConversationMessage.message_id).where(
            orm.ConversationMessage.conversation_id != conversation_id
        )
        await self.session.execute(delete(M).where(M.conversation_id == conversation_id, M.id.not_in(shared)))

    # Isolated blocks.

    async def link_blocks(self, conversation_id: str, blocks: Sequence[orm.Block]) -> None:
        for block in blocks:
            self.session.add(
                orm.ConversationBlock(conversation_id=conversation_id, block_id=block.id, block_label=block.label)
            )
        await self.session.flush()

    async def blocks_of(self, conversation_id: str) -> list[orm.Block]:
        rows = await self.session.scalars(
            select(orm.Block)
            .join(orm.ConversationBlock, orm.ConversationBlock.block_id == orm.Block.id)
            .where(orm.ConversationBlock.conversation_id == conversation_id)
            .order_by(orm.ConversationBlock.block_label)
        )
        return list(rows)

    async def block_ids_for(self, conversation_ids: Sequence[str]) -> dict[str, list[str]]:
        rows = await self.session.execute(
            select(orm.ConversationBlock.conversation_id, orm.ConversationBlock.block_id)
            .where(orm.ConversationBlock.conversation_id.in_(list(conversation_ids)))
            .order_by(orm.ConversationBlock.block_label)
        )
        found: dict[str, list[str]] = {}
        for conversation_id, block_id in rows.tuples():
            found.setdefault(conversation_id, []).append(block_id)
        return found

    async def delete_blocks(self, conversation_id: str) -> None:
        """Delete the conversation's isolated copies (they belong to nobody else)."""
        owned = select(orm.ConversationBlock.block_id).where(orm.ConversationBlock.conversation_id == conversation_id)
        await self.session.execute(delete(orm.Block).where(orm.Block.id.in_(owned)))


def with_isolated(shared: Sequence[orm.Block], isolated: Sequence[orm.Block]) -> list[orm.Block]:
    """The agent's blocks with the conversation's copies swapped in by label (attachment order kept)."""
    by_label = {b.label: b for b in isolated}
    return [by_label.get(b.label, b) for b in shared]
