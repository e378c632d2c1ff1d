"""A main agent's sleeptime side: created with ``enable_sleeptime``, kept in step with its blocks, deleted with it.

Implements `memlet.agents.sleeptime_hook.SleeptimeHook`. Enabling creates ``<name>-sleeptime`` (type
``sleeptime_agent``, the default sleeptime prompt and tools, no initial messages, the main agent's models, every main
block shared by id plus its own ``memory_persona``) and a ``sleeptime`` group managed by the main agent (frequency 5,
counter -1). For a ``voice_convo_agent``, as Letta does, the helper is a ``voice_sleeptime_agent`` on Letta's fixed
gpt-4.1 config and the group a ``voice_sleeptime`` one with message buffers of 30 / 15. Deleting the main agent deletes
its sleeptime agents and group; deleting a sleeptime agent deletes its group and turns ``enable_sleeptime`` off (null)
on the main agent. Deletion treats a ``voice_sleeptime`` group (made through ``/v1/groups``) the same way, as Letta
does.
"""

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.repository import AgentRepository
from memlet.agents.schemas import CreateAgent
from memlet.agents.service import AgentService
from memlet.agents.system_message import refresh_system_message
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.groups.repository import GroupRepository
from memlet.log import get_logger, log_fields

log = get_logger("sleeptime.lifecycle")

SLEEPTIME = "sleeptime"
# The groups that are an agent's sleeptime side, and the types of the agents that do its work.
SIDE_GROUP_TYPES = frozenset({SLEEPTIME, "voice_sleeptime"})
SIDE_AGENT_TYPES = frozenset({"sleeptime_agent", "voice_sleeptime_agent"})
DEFAULT_FREQUENCY = 5
MEMORY_PERSONA = """\
I look after the memory of an assistant that talks with a user. After its conversations I:
- keep the memory blocks short, current and free of duplicates, merging related facts;
- record what the user tells about themselves, their preferences and their plans, with exact dates;
- note patterns in what the user asks for, and conclusions that follow from what is already remembered."""
VOICE_SLEEPTIME = "voice_sleeptime"
VOICE_MEMORY_PERSONA = """\
I keep the memory of a voice assistant while it talks. From each transcript I:
- save the passages of older dialogue worth remembering, each with a note on why it matters;
- rewrite the user's memory block so it stays accurate, organised and free of stale facts;
- draw careful conclusions from what the user has said, without inventing anything."""
VOICE_GROUP_DESCRIPTION = "Low latency voice chat with async memory management."
# Letta gives every voice sleeptime agent this config, whatever the main agent runs on.
VOICE_SLEEPTIME_LLM_CONFIG: dict[str, Any] = {
    "model": "gpt-4.1",
    "model_endpoint_type": "openai",
    "model_endpoint": "https://api.openai.com/v1",
    "context_window": 256_000,
    "max_tokens": 8192,
}
DEFAULT_MAX_BUFFER, DEFAULT_MIN_BUFFER = 30, 15


class SleeptimeLifecycle:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    async def enable(self, session: AsyncSession, actor: Actor, agent_id: str) -> None:
        groups = GroupRepository(session)
        main = await AgentRepository(session).find(actor.organization_id, agent_id)
        if main is None:
            return
        voice = main.agent_type == "voice_convo_agent"
        if await groups.managed_by(agent_id, VOICE_SLEEPTIME if voice else SLEEPTIME):
            return
        if main.embedding_config is None:
            log.warning(
                "no sleeptime agent for an agent without an embedding config", extra=log_fields(agent_id=main.id)
            )
            return
        blocks = await BlockRepository(session).of_agent(main.id)
        persona = VOICE_MEMORY_PERSONA if voice else MEMORY_PERSONA
        spec: dict[str, Any] = {
            "name": f"{main.name}-sleeptime",
            "agent_type": "voice_sleeptime_agent" if voice else "sleeptime_agent",
            "block_ids": [b.id for b in blocks],
            # Its own memory_persona, unless the main agent has one: then that one is shared like the others
            # (a label is unique per agent; Letta's own test creates a main agent with a memory_persona block).
            "memory_blocks": []
            if any(b.label == "memory_persona" for b in blocks)
            else [{"label": "memory_persona", "value": persona}],
            "llm_config": VOICE_SLEEPTIME_LLM_CONFIG if voice else main.llm_config,
            "embedding_config": main.embedding_config,
            "project_id": main.project_id,
            "initial_message_sequence": [],
        }
        # No hook here: a sleeptime agent never gets a sleeptime agent of its own.
        try:
            request = CreateAgent.model_validate(spec)
        except ValidationError as exc:  # a stored config that no longer validates: refuse, never a 500
            raise BadRequestError(f"Cannot create the sleeptime agent of {main.id}: {exc.errors()[0]['msg']}") from None
        helper = await AgentService(session, self.catalog).create(actor, request)
        pattern: dict[str, Any] = (
            {
                "manager_type": VOICE_SLEEPTIME,
                "description": VOICE_GROUP_DESCRIPTION,
                "max_message_buffer_length": DEFAULT_MAX_BUFFER,
                "min_message_buffer_length": DEFAULT_MIN_BUFFER,
            }
            if voice
            else {
                "manager_type": SLEEPTIME,
                "description": "",
                "sleeptime_agent_frequency": DEFAULT_FREQUENCY,
                "turns_counter": -1,
            }
        )
        group = orm.Group(
            id=ids.new_id(ids.Prefix.GROUP),
            organization_id=actor.organization_id,
            manager_agent_id=main.id,
            project_id=main.project_id,
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
            **pattern,
        )
        await groups.create(group, [helper.id])

    async def before_delete(self, session: AsyncSession, actor: Actor, agent_id: str) -> None:
        """As Letta: a deleted sleeptime (or voice sleeptime) agent takes its group with it and turns the main
        agent's ``enable_sleeptime`` off; otherwise a deleted manager of such a group takes the group and every
        participant with it."""
        groups, agents = GroupRepository(session), AgentRepository(session)
        agent = await agents.find(actor.organization_id, agent_id)
        if agent is not None and agent.agent_type in SIDE_AGENT_TYPES:
            for group in await groups.groups_of_agent(agent_id):
                if group.manager_type in SIDE_GROUP_TYPES:
                    await self._drop_side(session, actor, group)
        else:
            for group in await groups.managed_by(agent_id):
                if group.manager_type in SIDE_GROUP_TYPES:
                    await self._drop_with_participants(session, actor, group, agent_id)
        await session.flush()

    async def _drop_with_participants(
        self, session: AsyncSession, actor: Actor, group: orm.Group, manager_id: str
    ) -> None:
        groups, agents = GroupRepository(session), AgentRepository(session)
        participants = [p for p in await groups.agent_ids(group.id) if p != manager_id]
        await groups.delete(group.id)
        for participant in participants:
            if await agents.find(actor.organization_id, participant, for_update=True) is not None:
                await agents.delete(participant)

    async def _drop_side(self, session: AsyncSession, actor: Actor, group: orm.Group) -> None:
        await GroupRepository(session).delete(group.id)
        if group.manager_agent_id is not None:
            main = await AgentRepository(session).find(actor.organization_id, group.manager_agent_id, for_update=True)
            if main is not None:
                main.enable_sleeptime = None

    async def blocks_attached(
        self, session: AsyncSession, actor: Actor, agent_id: str, block_ids: Sequence[str]
    ) -> None:
        groups, agents, blocks = GroupRepository(session), AgentRepository(session), BlockRepository(session)
        for group in await groups.managed_by(agent_id, SLEEPTIME):
            for participant in await groups.agent_ids(group.id):
                helper = await agents.find(actor.organization_id, participant, for_update=True)
                if helper is None or helper.agent_type != "sleeptime_agent":
                    continue
                held = await blocks.of_agent(helper.id)
                taken = {b.id for b in held} | {b.label for b in held}
                new = [b for b in await blocks.by_ids(actor.organization_id, block_ids) if not {b.id, b.label} & taken]
                if new:
                    await blocks.attach(helper.id, new)
                    await session.flush()
                    await refresh_system_message(session, helper, update_timestamp=False, with_rules=True)
