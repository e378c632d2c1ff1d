"""Conversations: create (atomic), list, read, update, delete, fork, and their message history.

Id forms: the CRUD routes take only `conv-<uuid4>`; the routes that work on a thread also take `default` (with
`agent_id`) and the deprecated `agent-<uuid4>` alias, both meaning the agent's own thread (`agents.message_ids`).
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.conversations.repository import ConversationRepository
from memlet.conversations.schemas import Conversation, CreateConversation, UpdateConversation
from memlet.conversations.system_message import refresh_conversation_system_message
from memlet.db import models as orm
from memlet.db.pagination import Order, Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import LettaMessage
from memlet.messages.service import HistoryQuery, views_in_order
from memlet.providers.catalog import BAD_MODEL_HANDLE

DEFAULT = "default"


@dataclass
class Thread:
    """What a thread-level route works on: the agent, and its conversation (None: the agent's default thread)."""

    agent: orm.Agent
    conversation: orm.Conversation | None

    @property
    def key(self) -> str:
        """The id its turns are serialized on: the conversation, or the agent for the default thread."""
        return self.conversation.id if self.conversation else self.agent.id


def default_not_found(conversation_id: str) -> NotFoundError:
    return NotFoundError(
        "Conversation",
        message=f"Conversation not found with id='{conversation_id}': the default conversation needs an agent_id.",
    )


def check_model_handle(model: str | None) -> None:
    if model is not None:
        provider, sep, name = model.partition("/")
        if not (sep and provider and name):
            raise BadRequestError(BAD_MODEL_HANDLE)


def settings_dict(settings: Any) -> dict[str, Any] | None:
    return settings.model_dump(mode="json", exclude_unset=True) if settings is not None else None


class ConversationService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.repo = ConversationRepository(session)
        self.agents = AgentRepository(session)

    async def _agent(self, agent_id: str) -> orm.Agent:
        return await self.agents.get_or_404(self.actor.organization_id, agent_id)

    async def find(self, conversation_id: str, *, for_update: bool = False) -> orm.Conversation:
        found = await self.repo.find(self.actor.organization_id, conversation_id, for_update=for_update)
        if found is None:
            raise NotFoundError("Conversation", conversation_id)
        return found

    async def thread(self, conversation_id: str, agent_id: str | None) -> Thread:
        """Resolve a path id of the `default | conv-… | agent-…` routes (404 for an unknown one)."""
        if conversation_id == DEFAULT:
            if not agent_id:
                raise default_not_found(conversation_id)
            return Thread(await self._agent(agent_id), None)
        if conversation_id.startswith(f"{ids.Prefix.AGENT}-"):
            return Thread(await self._agent(conversation_id), None)
        conversation = await self.find(conversation_id)
        return Thread(await self._agent(conversation.agent_id), conversation)

    async def view(self, conversation: orm.Conversation, *, in_context: bool = True) -> Conversation:
        block_ids = await self.repo.block_ids_for([conversation.id])
        out = Conversation.model_validate(conversation)
        out.in_context_message_ids = list(conversation.message_ids or []) if in_context else []
        out.isolated_block_ids = block_ids.get(conversation.id, [])
        return out

    async def create(self, agent_id: str, body: CreateConversation) -> Conversation:
        """One transaction: a bad label or model handle leaves nothing behind (the route's session rolls back)."""
        agent = await self._agent(agent_id)
        check_model_handle(body.model)
        blocks = BlockRepository(self.session)
        originals: list[orm.Block] = []
        for label in dict.fromkeys(body.isolated_block_labels or []):
            block = await blocks.by_label(agent.id, label)
            if block is None:
                raise BadRequestError(f"INVALID_ARGUMENT: Block with label '{label}' not found on agent '{agent.id}'")
            originals.append(block)
        conversation = orm.Conversation(
            id=ids.new_id(ids.Prefix.CONVERSATION),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            summary=body.summary,
            description=body.description,
            model=body.model,
            model_settings=settings_dict(body.model_settings),
            context_window_limit=body.context_window_limit,
            hidden=bool(body.hidden),
            archived=False,
            message_ids=[],
            created_by_id=self.actor.user_id,
            last_updated_by_id=self.actor.user_id,
        )
        await self.repo.add(conversation)
        copies = [_copy_block(b, self.actor) for b in originals]
        await blocks.add_many(copies)
        await self.repo.link_blocks(conversation.id, copies)
        await refresh_conversation_system_message(self.session, agent, conversation, opening=True)
        return await self.view(conversation)

    async def list_page(
        self, page: Page, *, agent_id: str | None, summary_search: str | None, order_by: str, archive_status: str
    ) -> list[Conversation]:
        if page.after:
            await self.find(page.after)
        if page.before:
            await self.find(page.before)
        if page.limit == 0:  # Letta applies the limit as given: LIMIT 0 (memlet's pagination reads 0 as no limit)
            return []
        rows = await self.repo.list_page(
            self.actor.organization_id,
            page,
            agent_id=agent_id,
            summary_search=summary_search,
            order_by=order_by,
            archived={"archived": True, "unarchived": False}.get(archive_status),
        )
        block_ids = await self.repo.block_ids_for([r.id for r in rows])
        views = []
        for row in rows:
            view = Conversation.model_validate(row)
            view.in_context_message_ids = list(row.message_ids or [])
            view.isolated_block_ids = block_ids.get(row.id, [])
            views.append(view)
        return views

    async def get(self, conversation_id: str) -> Conversation:
        return await self.view(await self.find(conversation_id))

    async def update(self, conversation_id: str, body: UpdateConversation) -> Conversation:
        """Only the fields sent with a value change (nothing can be cleared, as in Letta)."""
        conversation = await self.find(conversation_id, for_update=True)
        check_model_handle(body.model)
        for name in ("summary", "model", "last_message_at", "description", "context_window_limit", "hidden"):
            value = getattr(body, name)
            if value is not None:
                setattr(conversation, name, value)
        if body.model_settings is not None:
            conversation.model_settings = settings_dict(body.model_settings)
        if body.archived is not None and body.archived != conversation.archived:
            conversation.archived = body.archived
            conversation.archived_at = datetime.now(UTC) if body.archived else None
        conversation.last_updated_by_id = self.actor.user_id
        await self.session.flush()
        return await self.view(conversation)

    async def delete(self, conversation_id: str) -> None:
        """The conversation, its isolated blocks and the messages only it holds (a fork keeps what it shares)."""
        conversation = await self.find(conversation_id, for_update=True)
        await self.repo.delete_blocks(conversation.id)
        await self.repo.delete_own_messages(conversation.id)
        await self.repo.delete(conversation.id)

    async def fork(
        self, conversation_id: str, agent_id: str | None, *, message_id: str | None, hidden: bool | None
    ) -> Conversation:
        """A new conversation sharing the source's in-context messages (up to `message_id`, inclusive)."""
        thread = await self.thread(conversation_id, agent_id)
        source = thread.conversation
        window = list(source.message_ids if source else thread.agent.message_ids or [])[1:]
        if message_id is not None:
            if message_id not in window:
                raise NotFoundError(
                    "Message", message=f"Message {message_id} is not in the context of conversation {conversation_id}"
                )
            window = window[: window.index(message_id) + 1]
        fork = orm.Conversation(
            id=ids.new_id(ids.Prefix.CONVERSATION),
            organization_id=thread.agent.organization_id,
            agent_id=thread.agent.id,
            model=source.model if source else None,
            model_settings=source.model_settings if source else None,
            context_window_limit=source.context_window_limit if source else None,
            hidden=bool(hidden),
            archived=False,
            message_ids=window,
            created_by_id=self.actor.user_id,
            last_updated_by_id=self.actor.user_id,
        )
        await self.repo.add(fork)
        await self.repo.link_messages(fork.id, window)
        await refresh_conversation_system_message(self.session, thread.agent, fork, opening=True)
        return await self.view(fork)

    async def messages(self, conversation_id: str, agent_id: str | None, query: HistoryQuery) -> list[LettaMessage]:
        """The thread's whole history (in context or not), rows in the asked order (newest first by default), each
        row's parts (reasoning, then the reply) in their own order, as Letta lists a conversation. The agent's
        default thread follows the agent history's rule instead (`_default_rows`)."""
        thread = await self.thread(conversation_id, agent_id)
        agent = thread.agent
        if thread.conversation is None:
            rows = await self._default_rows(agent, query)
        else:
            rows = await self._conversation_rows(thread.conversation, query)
        return views_in_order(rows, query, text_is_assistant=agent.agent_type == "letta_v1_agent", newest_first=False)

    async def _conversation_rows(self, conversation: orm.Conversation, query: HistoryQuery) -> list[orm.Message]:
        # A cursor that is no message of this conversation is ignored, as Letta does (it pages from the start).
        before = query.before if query.before and await self.repo.in_history(conversation.id, query.before) else None
        after = query.after if query.after and await self.repo.in_history(conversation.id, query.after) else None
        page = thread_page(before, after, query.limit, query.order or "desc")
        window = conversation.message_ids or []
        system_id = window[0] if window else None
        return await self.repo.history_page(conversation.id, page, group_id=query.group_id, system_id=system_id)

    async def _default_rows(self, agent: orm.Agent, query: HistoryQuery) -> list[orm.Message]:
        """The default thread as the agent's history lists it: with no `order`, Letta's page (the newest `limit`
        rows, oldest first, cursors absolute); an explicit order is that order with sort-relative cursors. A cursor
        that is no message of the agent is a 404, as in Letta."""
        repo = MessageRepository(self.session)
        await repo.ensure_cursors(agent.id, query.before, query.after)
        group_id = query.group_id
        if query.order is None:
            found = await repo.agent_tail(
                agent.organization_id,
                agent.id,
                after=query.after,
                before=query.before,
                limit=query.limit,
                group_id=group_id,
                conversation_id=DEFAULT,
            )
            return found[1] if found is not None else []
        page = thread_page(query.before, query.after, query.limit, query.order)
        return await repo.page_for_agent(agent.id, page, group_id=group_id, conversation_id=DEFAULT)


def thread_page(before: str | None, after: str | None, limit: int | None, order: Order) -> Page:
    """A thread's page. `before` is the older side whatever the order, as in Letta: Letta Code (and the Letta Code
    SDK's `listMessages`) reads newest first and asks for the next page `before` the oldest id it got. `after` follows
    the order, so letta-client's auto-pagination (`after` = a page's last id) walks newest first too. Newest first,
    Letta's `before` is therefore the order's `after`, and an `after` with it bounds the newer side."""
    if order == "desc" and before:
        return Page(before=after, after=before, limit=limit, order=order)
    return Page(before=before, after=after, limit=limit, order=order)


def _copy_block(block: orm.Block, actor: Actor) -> orm.Block:
    return orm.Block(
        id=ids.new_id(ids.Prefix.BLOCK),
        organization_id=block.organization_id,
        label=block.label,
        value=block.value,
        limit=block.limit,
        description=block.description,
        read_only=block.read_only,
        metadata_=dict(block.metadata_ or {}),
        created_by_id=actor.user_id,
        last_updated_by_id=actor.user_id,
    )
