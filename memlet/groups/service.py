"""Groups: create, read, modify and delete them, share blocks with them, and list or reset their messages.

Only the group rows live here; no pattern runs a turn. As in Letta 0.16.8, ``round_robin``, ``supervisor`` and
``dynamic`` are CRUD-only (a send to their manager agent is an ordinary send), and the ``sleeptime`` pattern is run
by the sleeptime code, which builds on `GroupRepository`.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.agents.system_message import refresh_system_message
from memlet.blocks.repository import BlockRepository
from memlet.blocks.service import block_not_found, duplicate_label_error
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, MethodNotAllowedError, NotFoundError
from memlet.groups import rules
from memlet.groups.repository import GroupFilters, GroupRepository
from memlet.groups.schemas import Group, GroupCreate, GroupUpdate, InternalTemplateGroupCreate, TemplateIds
from memlet.groups.views import group_views
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import EDITING_REMOVED, LettaMessage
from memlet.messages.service import HistoryQuery, views_in_order


def group_not_found(group_id: str) -> NotFoundError:
    return NotFoundError("Group", group_id)


class GroupService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.groups = GroupRepository(session)
        self.agents = AgentRepository(session)
        self.blocks = BlockRepository(session)
        self.messages = MessageRepository(session)

    async def _row(self, group_id: str, *, for_update: bool = False) -> orm.Group:
        row = await self.groups.find(self.actor.organization_id, group_id, for_update=for_update)
        if row is None:
            raise group_not_found(group_id)
        return row

    async def _views(self, rows: Sequence[orm.Group]) -> list[Group]:
        return await group_views(self.groups, rows)

    async def _view(self, row: orm.Group) -> Group:
        return (await self._views([row]))[0]

    async def _agents(self, agent_ids: Sequence[str], manager_type: str) -> list[orm.Agent]:
        """The participants, checked as Letta checks them: every id must name an agent (404 listing the missing
        ones); a repeated id is a 400; a dynamic group also needs distinct names (the manager picks by name)."""
        if len(set(agent_ids)) != len(agent_ids):
            raise BadRequestError("Duplicate agent ids found in list")
        found = [
            a for a in await self.agents.by_ids(list(agent_ids)) if a.organization_id == self.actor.organization_id
        ]
        missing = set(agent_ids) - {a.id for a in found}
        if missing:
            raise NotFoundError("Agent", message=f"Items not found in agents: {rules.set_repr(missing)}")
        if manager_type == "dynamic" and len({a.name for a in found}) != len(found):
            raise BadRequestError("Duplicate agent names found in the provided agent IDs.")
        return found

    async def _manager(self, agent_id: str | None) -> None:
        if agent_id is not None:
            await self.agents.get_or_404(self.actor.organization_id, agent_id)

    async def create(self, spec: GroupCreate, *, template: TemplateIds | None = None) -> Group:
        """Create a group. ``template`` (or an `InternalTemplateGroupCreate`) records the template it came from."""
        if isinstance(spec, InternalTemplateGroupCreate):
            template = TemplateIds(
                template_id=spec.template_id, base_template_id=spec.base_template_id, deployment_id=spec.deployment_id
            )
        config = spec.manager_config
        columns = rules.columns_for_create(config)
        agents = await self._agents(spec.agent_ids, config.manager_type)
        await self._manager(columns.get("manager_agent_id"))
        row = orm.Group(
            id=ids.new_id(ids.Prefix.GROUP),
            organization_id=self.actor.organization_id,
            description=spec.description,
            project_id=spec.project_id,
            hidden=spec.hidden,
            created_by_id=self.actor.user_id,
            last_updated_by_id=self.actor.user_id,
            **columns,
            **(template.model_dump() if template else {}),
        )
        await self.groups.create(row, spec.agent_ids)
        if spec.shared_block_ids:
            await self._share_blocks(row, spec.shared_block_ids, agents)
        return await self._view(row)

    async def _share_blocks(self, row: orm.Group, block_ids: Sequence[str], participants: list[orm.Agent]) -> None:
        """Letta's create with ``shared_block_ids``: link the blocks on the group and attach each one to every
        participant and the manager (skipping agents that already hold it; a label clash is a 409)."""
        wanted = list(dict.fromkeys(block_ids))
        blocks = await self.blocks.by_ids(self.actor.organization_id, wanted)
        missing = [b for b in wanted if b not in {block.id for block in blocks}]
        if missing:
            raise block_not_found(missing[0])
        await self.groups.set_blocks(row.id, wanted)
        holders = list(participants)
        if row.manager_agent_id and row.manager_agent_id not in {a.id for a in holders}:
            holders.append(await self.agents.get_or_404(self.actor.organization_id, row.manager_agent_id))
        for agent in holders:
            held = {b.id for b in await self.blocks.of_agent(agent.id)}
            labels = await self.blocks.labels_of(agent.id)
            new = [b for b in blocks if b.id not in held]
            for block in new:
                if block.label in labels:
                    raise duplicate_label_error(block.label, agent.id)
                labels.add(block.label)
            if new:
                await self.blocks.attach(agent.id, new)
                await refresh_system_message(self.session, agent, update_timestamp=False, with_rules=True)

    async def get(self, group_id: str) -> Group:
        return await self._view(await self._row(group_id))

    async def search(self, filters: GroupFilters, page: Page) -> list[Group]:
        return await self._views(await self.groups.list_page(self.actor.organization_id, filters, page))

    async def count(self) -> int:
        return await self.groups.count(self.actor.organization_id, GroupFilters(show_hidden=True))

    async def list_for_agent(self, agent_id: str, filters: GroupFilters, page: Page) -> list[Group]:
        """The groups the agent takes part in (not those it only manages)."""
        await self.agents.get_or_404(self.actor.organization_id, agent_id)
        participant = GroupFilters(manager_type=filters.manager_type, show_hidden=True, participant_id=agent_id)
        return await self._views(await self.groups.list_page(self.actor.organization_id, participant, page))

    async def modify(self, group_id: str, update: GroupUpdate) -> Group:
        """Apply a partial update as Letta does: only values that are set and truthy change; the pattern is fixed
        at creation; ``agent_ids`` replaces the participants; ``shared_block_ids`` is ignored."""
        row = await self._row(group_id, for_update=True)
        fields: dict[str, Any] = {}
        if update.manager_config is not None:
            fields = rules.columns_for_update(row, update.manager_config)
            await self._manager(fields.get("manager_agent_id"))
        if update.description:
            fields["description"] = update.description
        if update.project_id:
            fields["project_id"] = update.project_id
        if update.agent_ids:
            await self._agents(update.agent_ids, row.manager_type)
            await self.groups.set_agents(row.id, update.agent_ids)
        # The deprecated `shared_block_ids` is ignored here, as Letta's modify ignores it (attach/detach change them).
        fields["last_updated_by_id"] = self.actor.user_id
        await self.groups.update(row.id, **fields)
        await self.session.refresh(row)
        return await self._view(row)

    async def delete(self, group_id: str) -> None:
        await self._row(group_id)
        await self.groups.delete(group_id)

    async def attach_block(self, group_id: str, block_id: str) -> None:
        """Link a block on the group only (members do not get it, as in Letta); again is a no-op."""
        await self._group_and_block(group_id, block_id)
        await self.groups.add_block(group_id, block_id)

    async def detach_block(self, group_id: str, block_id: str) -> None:
        await self._group_and_block(group_id, block_id)
        await self.groups.remove_block(group_id, block_id)

    async def _group_and_block(self, group_id: str, block_id: str) -> None:
        await self._row(group_id)
        if not ids.is_valid(block_id, ids.Prefix.BLOCK):
            raise BadRequestError(f"Invalid block ID format: {block_id}. Expected format: 'block-<uuid4>'")
        if await self.blocks.find(self.actor.organization_id, block_id) is None:
            raise block_not_found(block_id)

    async def list_messages(self, group_id: str, query: HistoryQuery) -> list[LettaMessage]:
        """The group's messages: with a manager agent, that agent's messages carrying the group id; without one,
        every message of the organization carrying it.

        With no ``order`` the pages are Letta's: the manager's newest ``limit`` messages oldest first (``after`` =
        newer than), or without a manager the oldest ``limit`` first. An explicit order gives sort-relative cursors,
        as an agent's own message list does."""
        row = await self._row(group_id)
        org_id = self.actor.organization_id
        manager_id = row.manager_agent_id
        if manager_id and query.order is None:
            found = await self.messages.agent_tail(
                org_id, manager_id, after=query.after, before=query.before, limit=query.limit, group_id=group_id
            )
            tail_type, tail = found or ("", [])
            return views_in_order(tail, query, text_is_assistant=tail_type == "letta_v1_agent", newest_first=False)
        page = Page(before=query.before, after=query.after, limit=query.limit, order=query.order or "asc")
        if manager_id:
            agent_type = await self.agents.agent_type(org_id, manager_id)
            rows = await self.messages.page_for_agent(manager_id, page, group_id=group_id)
            text_is_assistant = agent_type == "letta_v1_agent"
        else:
            rows = await self.messages.page_for_org(org_id, page, group_id=group_id)
            text_is_assistant = True
        newest_first = page.descending
        ordered = rows[::-1] if newest_first else rows
        return views_in_order(ordered, query, text_is_assistant=text_is_assistant, newest_first=newest_first)

    async def modify_message(self, group_id: str, message_id: str) -> None:
        """Messages are immutable: the same 405 as ``PATCH /v1/agents/{id}/messages/{id}`` (Letta answers 500)."""
        await self._row(group_id)
        raise MethodNotAllowedError(EDITING_REMOVED)

    async def reset_messages(self, group_id: str) -> None:
        """Hard-delete every message carrying the group id, and take them out of their agents' context windows
        (Letta leaves the ids dangling)."""
        await self._row(group_id)
        deleted = await self.messages.delete_for_group(self.actor.organization_id, group_id)
        for agent_id, message_ids in deleted.items():
            await self.agents.remove_message_ids(agent_id, message_ids)
