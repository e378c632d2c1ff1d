"""Memory blocks: standalone CRUD (`/v1/blocks`) and an agent's core memory (`/v1/agents/{id}/core-memory`).

A block shared by several agents is one row, so an edit is seen by all of them. Letta 0.16.8 never checks a block's
character limit on a write; memlet checks it (`ensure_within_limit`, before anything changes) only where a client
writes a block through these routes: a new standalone block, and an update that sets `value` or `limit` (Letta's
own SDK tests expect a 422 there). Blocks made with an agent or by an agent-file import, and a PATCH of other fields
of a block that grew past its limit through the memory tools, are stored as Letta stores them. Any change that
alters what the model sees recompiles the stored system message of every agent holding the block.
"""

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from memlet import ids
from memlet.actor import Actor
from memlet.blocks.file_blocks import file_blocks
from memlet.blocks.repository import BlockFilters, BlockRepository
from memlet.blocks.schemas import Block, BlockUpdate, CreateBlock, Memory
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import ConflictError, LimitExceededError, NotFoundError, UpdateLimitExceededError
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.prompt.rebuild import PromptRebuilder

# Fields rendered into the system prompt: changing one means attached agents' prompts must be rebuilt.
PROMPT_FIELDS = frozenset({"value", "limit", "label", "description", "read_only"})


def ensure_within_limit(
    label: str | None, value: str, limit: int, error: type[LimitExceededError] = LimitExceededError
) -> None:
    """Raise `error` (naming limit and size; 400 by default) when `value` is longer than `limit` characters."""
    if len(value) > limit:
        raise error(label or "", limit, len(value))


def ensure_unique_labels(labels: Iterable[str]) -> None:
    """Raise `ConflictError` naming the first label that appears twice (a label is unique per agent)."""
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise duplicate_label_error(label)
        seen.add(label)


def duplicate_label_error(label: str, agent_id: str | None = None) -> ConflictError:
    where = f"agent {agent_id}" if agent_id else "the agent"
    return ConflictError(f"CONFLICT: A block with label '{label}' is already attached to {where}")


def block_not_found(block_id: str) -> NotFoundError:
    """Letta's text for an unknown block id."""
    return NotFoundError("Block", block_id, message=f"Block with id '{block_id}' not found")


def to_block(row: orm.Block) -> Block:
    return Block.model_validate(row)


def new_block(actor: Actor, spec: CreateBlock) -> orm.Block:
    """An unsaved block row from a `CreateBlock`; its character limit is not checked (as in Letta)."""
    data = spec.model_dump(exclude={"metadata", "tags"})
    return orm.Block(
        id=ids.new_id(ids.Prefix.BLOCK),
        organization_id=actor.organization_id,
        metadata_=spec.metadata or {},
        tags=list(dict.fromkeys(spec.tags or [])),
        created_by_id=actor.user_id,
        last_updated_by_id=actor.user_id,
        **data,
    )


def _changes(update: BlockUpdate) -> dict[str, Any]:
    # Like Letta, a null in the body means "leave as is", not "clear".
    fields = update.model_dump(exclude_unset=True, exclude_none=True)
    if "metadata" in fields:
        fields["metadata_"] = fields.pop("metadata")
    if "tags" in fields:
        fields["tags"] = list(dict.fromkeys(fields["tags"]))
    return fields


class BlockService:
    def __init__(self, session: AsyncSession, rebuild_prompts: PromptRebuilder) -> None:
        self.session = session
        self.blocks = BlockRepository(session)
        self.rebuild_prompts = rebuild_prompts

    async def _row(self, actor: Actor, block_id: str, *, for_update: bool = False) -> orm.Block:
        row = await self.blocks.find(actor.organization_id, block_id, for_update=for_update)
        if row is None:
            raise block_not_found(block_id)
        return row

    async def _agent(self, actor: Actor, agent_id: str) -> orm.Agent:
        agent = await self.blocks.find_agent(actor.organization_id, agent_id)
        if agent is None:
            raise NotFoundError("Agent", agent_id)
        return agent

    async def _recompile(self, agents: Sequence[orm.Agent]) -> None:
        await self.session.flush()
        await self.rebuild_prompts(self.session, agents)

    async def _apply(self, actor: Actor, row: orm.Block, update: BlockUpdate, via: orm.Agent | None = None) -> Block:
        """Validate and apply a partial update, keep attachments' labels in step, recompile affected prompts.

        `via`: the agent the block was edited through (core memory by label), whose prompt Letta rebuilds after
        every such PATCH, even one that changes nothing it shows."""
        fields = _changes(update)
        label = fields.get("label", row.label)
        if "value" in fields or "limit" in fields:
            value, limit = fields.get("value", row.value), fields.get("limit", row.limit)
            ensure_within_limit(label, value, limit, UpdateLimitExceededError)
        changed = {k for k, v in fields.items() if getattr(row, k) != v}
        agents = await self.blocks.agents_of(row.id) if changed & PROMPT_FIELDS else [via] if via else []
        if "label" in changed:
            clash = await self.blocks.holder_of_label([a.id for a in agents], label, other_than=row.id)
            if clash is not None:
                raise duplicate_label_error(label, clash.agent_id)
            await self.blocks.relabel(row.id, label)
        for key in changed:
            setattr(row, key, fields[key])
        if changed:
            row.last_updated_by_id = actor.user_id
        if changed and not changed & PROMPT_FIELDS:
            # A block newer than an agent's prompt makes its next turn recompile it (`refresh_if_stale`); Letta
            # rebuilds no prompt for tags or metadata, so they keep the block's `updated_at`.
            flag_modified(row, "updated_at")
        await self._recompile(agents)
        return to_block(row)

    async def create(self, actor: Actor, spec: CreateBlock) -> Block:
        ensure_within_limit(spec.label, spec.value, spec.limit)
        row = new_block(actor, spec)
        await self.blocks.add_many([row])
        return to_block(row)

    async def get(self, actor: Actor, block_id: str) -> Block:
        return to_block(await self._row(actor, block_id))

    async def search(self, actor: Actor, filters: BlockFilters, page: Page) -> list[Block]:
        return [to_block(r) for r in await self.blocks.list_page(actor.organization_id, filters, page)]

    async def count(self, actor: Actor, filters: BlockFilters) -> int:
        """Count as Letta does: hidden blocks always count, and with no filter at all templates count too."""
        asked = (filters.label, filters.template_name, filters.project_id, filters.tags or None)
        every_kind = not filters.templates_only and all(v is None for v in asked)
        counted = replace(filters, show_hidden=True, templates_only=None if every_kind else filters.templates_only)
        return await self.blocks.count(actor.organization_id, counted)

    async def modify(self, actor: Actor, block_id: str, update: BlockUpdate) -> Block:
        return await self._apply(actor, await self._row(actor, block_id, for_update=True), update)

    async def delete(self, actor: Actor, block_id: str) -> None:
        """Delete a block everywhere; the agents that held it lose it from their prompts."""
        await self._row(actor, block_id)
        agents = await self.blocks.agents_of(block_id)
        await self.blocks.delete(block_id)
        await self._recompile(agents)

    async def agents_page(self, actor: Actor, block_id: str, page: Page) -> list[orm.Agent]:
        await self._row(actor, block_id)
        return await self.blocks.agents_page(actor.organization_id, block_id, page)

    async def list_for_agent(self, actor: Actor, agent_id: str, page: Page) -> list[Block]:
        await self._agent(actor, agent_id)
        return [to_block(r) for r in await self.blocks.page_for_agent(agent_id, page)]

    async def memory(self, actor: Actor, agent_id: str) -> Memory:
        """The agent's core memory, blocks in prompt (attachment) order."""
        agent = await self._agent(actor, agent_id)
        rows = (await self.blocks.for_agents([agent_id])).get(agent_id, [])
        links = await FileAgentRepository(self.session).of_agent(agent_id)
        return Memory(
            agent_type=agent.agent_type, blocks=[to_block(r) for r in rows], file_blocks=file_blocks(agent, links)
        )

    async def _by_label(
        self, actor: Actor, agent_id: str, label: str, *, for_update: bool = False
    ) -> tuple[orm.Agent, orm.Block]:
        agent = await self._agent(actor, agent_id)
        row = await self.blocks.by_label(agent_id, label, for_update=for_update)
        if row is None:
            raise NotFoundError("Block", message=f"No block with label '{label}' found for agent '{agent_id}'")
        return agent, row

    async def get_by_label(self, actor: Actor, agent_id: str, label: str) -> Block:
        return to_block((await self._by_label(actor, agent_id, label))[1])

    async def modify_by_label(self, actor: Actor, agent_id: str, label: str, update: BlockUpdate) -> Block:
        agent, row = await self._by_label(actor, agent_id, label, for_update=True)
        return await self._apply(actor, row, update, via=agent)

    async def attach(self, actor: Actor, agent_id: str, block_id: str) -> None:
        """Attach a block to an agent; attaching it again is a no-op, a taken label is a 409."""
        agent = await self._agent(actor, agent_id)
        row = await self._row(actor, block_id)
        if await self.blocks.attachment(agent_id, block_id) is not None:
            return
        if row.label in await self.blocks.labels_of(agent_id):
            raise duplicate_label_error(row.label, agent_id)
        await self.blocks.attach(agent_id, [row])
        await self._recompile([agent])

    async def detach(self, actor: Actor, agent_id: str, block_id: str) -> None:
        agent = await self._agent(actor, agent_id)
        if not await self.blocks.detach(agent_id, block_id):
            raise NotFoundError(
                "Block",
                message=f"No block with id '{block_id}' found for agent '{agent_id}' with actor id: '{actor.user_id}'",
            )
        await self._recompile([agent])
