"""Agent lifecycle: create (with blocks, tools, rules and initial messages), read, list, update, delete."""

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.initial_messages import initial_messages
from memlet.agents.managed_group_hook import ManagedGroupLookup
from memlet.agents.parts import CompactionSettings, Group
from memlet.agents.repository import AgentFilters, AgentLinks, AgentRepository
from memlet.agents.schemas import AgentState, CreateAgent, InternalTemplateAgentCreate, UpdateAgent
from memlet.agents.sleeptime_hook import SleeptimeHook
from memlet.agents.system_message import refresh_system_message
from memlet.agents.views import (
    ALL_RELATIONSHIPS,
    DEFAULT_RELATIONSHIPS,
    MANAGED_GROUP,
    AgentRelations,
    ConfigMemo,
    agent_state,
)
from memlet.blocks.repository import BlockRepository
from memlet.blocks.service import new_block
from memlet.crypto import PREFIX
from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.folders.repository import FolderRepository
from memlet.messages.repository import MessageRepository
from memlet.prompt.memory import system_message_text
from memlet.prompt.prompts import SUMMARIZER_INSTRUCTIONS, default_system_prompt
from memlet.tools.base_tools import base_tool_names_for, default_tool_rules_for, includes_base_tool_rules
from memlet.tools.repository import ToolRepository
from memlet.tools.rules import dump_tool_rules
from memlet.tools.schemas import Tool

# Letta's default descriptions for the two classic blocks.
DEFAULT_BLOCK_DESCRIPTIONS = {
    "human": "The human block: Stores key details about the person you are conversing with, allowing for more "
    "personalized and friend-like conversation.",
    "persona": "The persona block: Stores details about your current persona, guiding how you behave and respond. "
    "This helps you to maintain consistency and personality in your interactions.",
}


def default_compaction_settings(settings: CompactionSettings | None, handle: str | None) -> dict[str, Any]:
    """A new agent's stored compaction settings: as in Letta, always present, with the model and prompt filled in.

    memlet summarizes with the agent's own model and its own instructions, so those are the defaults it reports.
    """
    filled = settings or CompactionSettings()
    defaults = {"model": filled.model or handle, "prompt": filled.prompt or SUMMARIZER_INSTRUCTIONS}
    return filled.model_copy(update=defaults).model_dump(mode="json")


def _secrets(values: dict[str, str] | None) -> list[dict[str, Any]]:
    return [
        {"id": ids.new_id("agent-env"), "key": k, "value": v, "description": None} for k, v in (values or {}).items()
    ]


class AgentService:
    def __init__(
        self,
        session: AsyncSession,
        catalog: Catalog,
        sleeptime: SleeptimeHook | None = None,
        managed_groups: ManagedGroupLookup | None = None,
    ) -> None:
        self.session = session
        self.catalog = catalog
        self.sleeptime = sleeptime
        self.managed_groups = managed_groups
        self.agents = AgentRepository(session)
        self.blocks = BlockRepository(session)
        self.tools = ToolRepository(session)

    async def get_row(self, actor: Actor, agent_id: str) -> orm.Agent:
        agent = await self.agents.get_or_404(actor.organization_id, agent_id)
        return agent

    async def relations(
        self,
        agents: Sequence[orm.Agent],
        include: frozenset[str],
        links: Mapping[str, AgentLinks] | None = None,
    ) -> dict[str, AgentRelations]:
        """Relationships for a page of agents: one query per relationship, never per agent.

        Tags, identity ids, folder ids and the manager flag come in one statement (or with the page, as ``links``);
        identity, folder and group rows are read only when some agent of the page has any (most have none).
        """
        agent_ids = [a.id for a in agents]
        if links is None:
            links = await self.agents.links_for(agent_ids, managers=MANAGED_GROUP in include)
        blocks = await self.blocks.for_agents(agent_ids) if "agent.blocks" in include else {}
        tools = await self.tools.for_agents(agent_ids) if "agent.tools" in include else {}
        with_identities = [i for i in agent_ids if i in links and links[i].identity_ids]
        identities = await self.agents.identities_for(with_identities) if with_identities else {}
        with_sources = [i for i in agent_ids if i in links and links[i].source_ids]
        folders = FolderRepository(self.session)
        sources = await folders.for_agents(with_sources) if with_sources and "agent.sources" in include else {}
        managers = [i for i in agent_ids if i in links and links[i].manages_group]
        groups = await self._managed_groups(managers) if managers and MANAGED_GROUP in include else {}
        # Agents share tool rows: build each tool's public view once for the whole page.
        views: dict[str, Tool] = {}
        for rows in tools.values():
            for row in rows:
                if row.id not in views:
                    views[row.id] = Tool.model_validate(row)
        return {
            a.id: AgentRelations(
                blocks=blocks.get(a.id, []),
                tools=[views[t.id] for t in tools.get(a.id, [])],
                tags=links[a.id].tags if a.id in links else [],
                sources=sources.get(a.id, []),
                identities=identities.get(a.id, []),
                include=include,
                secrets=self.catalog.keyring.reveal_secrets(a.secrets) if "agent.secrets" in include else (),
                managed_group=groups.get(a.id),
            )
            for a in agents
        }

    async def _managed_groups(self, agent_ids: Sequence[str]) -> Mapping[str, Group]:
        if self.managed_groups is None:
            return {}
        return await self.managed_groups(self.session, agent_ids)

    async def get_state(
        self, actor: Actor, agent_id: str, include: frozenset[str] = DEFAULT_RELATIONSHIPS
    ) -> AgentState:
        agent = await self.get_row(actor, agent_id)
        return agent_state(agent, (await self.relations([agent], include))[agent.id])

    async def list_page(
        self, actor: Actor, filters: AgentFilters, page: Page, *, sort_by: str, include: frozenset[str]
    ) -> list[AgentState]:
        page_rows = await self.agents.list_page_with_links(
            actor.organization_id, filters, page, sort_by=sort_by, managers=MANAGED_GROUP in include
        )
        rows = [agent for agent, _ in page_rows]
        relations = await self.relations(rows, include, {agent.id: links for agent, links in page_rows})
        memo = ConfigMemo()
        return [agent_state(a, relations[a.id], memo) for a in rows]

    async def count(self, actor: Actor, filters: AgentFilters) -> int:
        return await self.agents.count(actor.organization_id, filters)

    async def _llm_config(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        settings = req.model_settings.model_dump(exclude_unset=True) if req.model_settings else None
        if req.model:
            return await self.catalog.resolve_llm(
                self.session,
                actor.organization_id,
                req.model,
                context_window_limit=req.context_window_limit,
                model_settings=settings,
            )
        if req.llm_config:
            config = self.catalog.normalize_llm_config(req.llm_config.model_dump(mode="json"))
            await self._check_endpoint(config, "model_endpoint", "llm_config.model_endpoint")
            if req.context_window_limit:
                config["context_window"] = req.context_window_limit
            return config
        return None

    async def _embedding_config(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        if req.embedding:
            return await self.catalog.resolve_embedding(self.session, actor.organization_id, req.embedding)
        config = req.embedding_config.model_dump(mode="json") if req.embedding_config else None
        await self._check_endpoint(config, "embedding_endpoint", "embedding_config.embedding_endpoint")
        return config

    async def _check_endpoint(self, config: dict[str, Any] | None, key: str, field: str) -> None:
        """400 when the outbound URL policy refuses a client-given endpoint (memlet.net.outbound)."""
        url = (config or {}).get(key)
        if isinstance(url, str) and url:
            await self.catalog.outbound.check_url(url, field)

    async def _tools_for(self, actor: Actor, req: CreateAgent, *, ignore_missing: bool) -> list[orm.Tool]:
        names = list(req.tools or [])
        if req.include_base_tools:
            names = (
                base_tool_names_for(
                    req.agent_type,
                    enable_sleeptime=bool(req.enable_sleeptime),
                    include_multi_agent_tools=req.include_multi_agent_tools,
                )
                + names
            )
        by_name = await self.tools.by_names(actor.organization_id, names)
        missing = sorted(set(names) - {t.name for t in by_name})
        if missing and not ignore_missing:
            raise NotFoundError("Tool", message=f"Tools not found: {', '.join(missing)}")
        by_id = await self.tools.by_ids(actor.organization_id, req.tool_ids or [])
        missing = sorted(set(req.tool_ids or []) - {t.id for t in by_id})
        if missing and not ignore_missing:
            raise NotFoundError("Tool", missing[0])
        unique: dict[str, orm.Tool] = {}
        for tool in [*by_name, *by_id]:
            unique.setdefault(tool.id, tool)
        return sorted(unique.values(), key=lambda t: names.index(t.name) if t.name in names else len(names))

    def _tool_rules(self, req: CreateAgent, tools: Sequence[orm.Tool], model: str) -> list[dict[str, Any]]:
        user_rules = dump_tool_rules(req.tool_rules or [])
        names = [t.name for t in tools]
        rules = list(user_rules)
        if includes_base_tool_rules(
            req.agent_type,
            model,
            requested=req.include_base_tool_rules,
            has_user_rules=bool(user_rules),
            enable_sleeptime=bool(req.enable_sleeptime and req.include_base_tools),
        ):
            rules += default_tool_rules_for(req.agent_type, names, model=model, include_base_tool_rules=True)
        rules += [
            {"tool_name": t.name, "type": "requires_approval", "prompt_template": None}
            for t in tools
            if t.default_requires_approval
        ]
        unique: dict[tuple[str, str], dict[str, Any]] = {}
        for rule in rules:
            unique.setdefault((rule["tool_name"], rule["type"]), rule)
        return list(unique.values())

    async def _blocks_for(self, actor: Actor, req: CreateAgent) -> tuple[list[orm.Block], list[orm.Block]]:
        new = [
            new_block(
                actor, b.model_copy(update={"description": b.description or DEFAULT_BLOCK_DESCRIPTIONS.get(b.label)})
            )
            for b in req.memory_blocks or []
        ]
        existing = await self.blocks.by_ids(actor.organization_id, req.block_ids or [])
        missing = sorted(set(req.block_ids or []) - {b.id for b in existing})
        if missing:
            raise NotFoundError("Block", message=f"Block with id '{missing[0]}' not found")
        seen: set[str] = set()
        for block in [*new, *existing]:
            if block.label in seen:
                raise ConflictError(f"Duplicate block label '{block.label}': a label must be unique per agent")
            seen.add(block.label)
        return new, existing

    async def create(self, actor: Actor, req: CreateAgent, *, ignore_missing_tools: bool = False) -> AgentState:
        """Create an agent; with `ignore_missing_tools` (template deployments) unknown tools are left out, not a 404."""
        llm_config = await self._llm_config(actor, req)
        if llm_config is None:
            raise BadRequestError("INVALID_ARGUMENT: Must specify either model or llm_config in request")
        llm_config = self.catalog.apply_reasoning(llm_config, req.reasoning, req.agent_type)
        embedding_config = await self._embedding_config(actor, req)
        identity_ids = list(dict.fromkeys(req.identity_ids or []))
        identities = await self.agents.identities_by_ids(actor.organization_id, identity_ids)
        if missing := sorted(set(identity_ids) - {i.id for i in identities}):
            raise NotFoundError("Identity", missing[0])
        tools = await self._tools_for(actor, req, ignore_missing=ignore_missing_tools)
        template = req if isinstance(req, InternalTemplateAgentCreate) else None
        new_blocks, existing_blocks = await self._blocks_for(actor, req)
        secrets = _secrets(req.secrets or req.tool_exec_environment_variables)
        agent = orm.Agent(
            id=ids.new_id(ids.Prefix.AGENT),
            organization_id=actor.organization_id,
            name=req.name,
            description=req.description,
            agent_type=req.agent_type,
            system=req.system or default_system_prompt(req.agent_type),
            llm_config=llm_config,
            embedding_config=embedding_config,
            model_settings=self.catalog.model_settings_for(llm_config),
            compaction_settings=default_compaction_settings(req.compaction_settings, llm_config.get("handle")),
            response_format=req.response_format.model_dump(mode="json") if req.response_format else None,
            tool_rules=self._tool_rules(req, tools, llm_config.get("model") or ""),
            metadata_=req.metadata,
            secrets=self.catalog.keyring.seal_secrets(secrets),
            project_id=req.project_id,
            template_id=req.template_id,
            base_template_id=req.base_template_id,
            deployment_id=template.deployment_id if template else None,
            entity_id=template.entity_id if template else None,
            message_buffer_autoclear=req.message_buffer_autoclear,
            enable_sleeptime=req.enable_sleeptime,
            timezone=req.timezone or "UTC",
            max_files_open=req.max_files_open,
            per_file_view_window_char_limit=req.per_file_view_window_char_limit,
            hidden=req.hidden,
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
            message_ids=[],
        )
        # Everything is known here, so each table gets one INSERT and the response is built without reading back.
        blocks = [*new_blocks, *existing_blocks]
        tags = sorted(dict.fromkeys(req.tags or []))
        messages = initial_messages(agent, req.initial_message_sequence)
        agent.message_ids = [m.id for m in messages]
        agent.system_compiled_at = utcnow()
        messages[0].content = [
            {
                "type": "text",
                "text": system_message_text(
                    agent, blocks, recall_count=0, archival_count=0, archival_tags=[], now=agent.system_compiled_at
                ),
            }
        ]
        await self.agents.add(agent)
        await self.blocks.add_many(new_blocks)
        await self.blocks.attach(agent.id, blocks, start=0)
        await self.tools.attach(agent.id, [t.id for t in tools], start=0)
        await self.agents.set_tags(agent.id, tags, replace=False)
        await self.agents.set_identities(agent.id, identity_ids, replace=False)
        await MessageRepository(self.session).add(messages)
        relations = AgentRelations(blocks=blocks, tools=tools, tags=tags, identities=identities, secrets=secrets)
        if req.enable_sleeptime and self.sleeptime is not None:
            await self.sleeptime.enable(self.session, actor, agent.id)
            relations.managed_group = (await self._managed_groups([agent.id])).get(agent.id)
        return agent_state(agent, relations)

    async def update(self, actor: Actor, agent_id: str, req: UpdateAgent) -> AgentState:
        agent = await self.agents.get_or_404(actor.organization_id, agent_id, for_update=True)
        fields = req.model_dump(exclude_unset=True)
        if "message_ids" in fields and req.message_ids is not None:
            await self._check_own_messages(agent.id, req.message_ids)
        llm_config = await self._llm_config(actor, req) if {"model", "llm_config"} & fields.keys() else None
        if llm_config is None and "context_window_limit" in fields and req.context_window_limit:
            llm_config = {**agent.llm_config, "context_window": req.context_window_limit}
        if llm_config is not None:
            agent.llm_config = llm_config
            agent.model_settings = self.catalog.model_settings_for(llm_config)
        if {"embedding", "embedding_config"} & fields.keys():
            agent.embedding_config = await self._embedding_config(actor, req)
        await self._apply_links(actor, agent, req, fields)
        for name in (
            "name",
            "description",
            "message_buffer_autoclear",
            "enable_sleeptime",
            "timezone",
            "max_files_open",
            "per_file_view_window_char_limit",
            "hidden",
            "project_id",
            "template_id",
            "base_template_id",
            "last_run_completion",
            "last_run_duration_ms",
            "last_stop_reason",
        ):
            if name in fields:
                setattr(agent, name, fields[name])
        if "metadata" in fields:
            agent.metadata_ = req.metadata
        if "tool_rules" in fields:
            agent.tool_rules = dump_tool_rules(req.tool_rules or [])
        if "compaction_settings" in fields:
            handle = (agent.llm_config or {}).get("handle")
            agent.compaction_settings = default_compaction_settings(req.compaction_settings, handle)
        self._write_secrets(agent, req, fields)
        if "message_ids" in fields and req.message_ids is not None:
            agent.message_ids = list(req.message_ids)
        if "system" in fields and req.system is not None:
            agent.system = req.system
        agent.last_updated_by_id = actor.user_id
        if {"system", "block_ids", "tool_rules", "timezone"} & fields.keys():
            await refresh_system_message(self.session, agent, update_timestamp=False)
        await self.session.flush()
        if req.enable_sleeptime and self.sleeptime is not None:
            await self.sleeptime.enable(self.session, actor, agent.id)
        return await self.get_state(actor, agent.id, ALL_RELATIONSHIPS)

    def _write_secrets(self, agent: orm.Agent, req: UpdateAgent, fields: dict[str, Any]) -> None:
        keyring = self.catalog.keyring
        if "secrets" in fields or "tool_exec_environment_variables" in fields:
            agent.secrets = keyring.seal_secrets(_secrets(req.secrets or req.tool_exec_environment_variables))
        elif keyring.enabled and any(not str(s.get("value") or "").startswith(PREFIX) for s in agent.secrets or []):
            # Rows stored before encryption was turned on are encrypted the next time the agent is written.
            agent.secrets = keyring.reseal_secrets(agent.secrets)

    async def _check_own_messages(self, agent_id: str, message_ids: Sequence[str]) -> None:
        """An agent's context may only hold its own messages: another agent's id (or an unknown one) is a 400."""
        if foreign := await MessageRepository(self.session).foreign_ids(agent_id, message_ids):
            raise BadRequestError(
                f"INVALID_ARGUMENT: message_ids must be messages of agent {agent_id}; not its own: {', '.join(foreign)}"
            )

    async def _apply_links(self, actor: Actor, agent: orm.Agent, req: UpdateAgent, fields: dict[str, Any]) -> None:
        if "tags" in fields:
            await self.agents.set_tags(agent.id, req.tags or [])
        if "identity_ids" in fields:
            await self.agents.set_identities(agent.id, req.identity_ids or [])
        if "tool_ids" in fields and req.tool_ids is not None:
            tools = await self.tools.by_ids(actor.organization_id, req.tool_ids)
            if missing := sorted(set(req.tool_ids) - {t.id for t in tools}):
                raise NotFoundError("Tool", missing[0])
            current = {t.id for t in (await self.tools.for_agents([agent.id])).get(agent.id, [])}
            for tool_id in current - set(req.tool_ids):
                await self.tools.detach(agent.id, tool_id)
            await self.tools.attach(agent.id, [t for t in req.tool_ids if t not in current])
        if "block_ids" in fields and req.block_ids is not None:
            blocks = await self.blocks.by_ids(actor.organization_id, req.block_ids)
            if missing := sorted(set(req.block_ids) - {b.id for b in blocks}):
                raise NotFoundError("Block", message=f"Block with id '{missing[0]}' not found")
            current = {b.id for b in (await self.blocks.for_agents([agent.id])).get(agent.id, [])}
            for block_id in current - set(req.block_ids):
                await self.blocks.detach(agent.id, block_id)
            added = [b for b in blocks if b.id not in current]
            await self.blocks.attach(agent.id, added)
            await self.blocks_attached(actor, agent.id, [b.id for b in added])

    async def blocks_attached(self, actor: Actor, agent_id: str, block_ids: Sequence[str]) -> None:
        """Blocks just attached to an agent go to its sleeptime agents too."""
        if block_ids and self.sleeptime is not None:
            await self.session.flush()
            await self.sleeptime.blocks_attached(self.session, actor, agent_id, block_ids)

    async def delete(self, actor: Actor, agent_id: str) -> None:
        # The agent row before its messages, in the order a prompt rebuild takes them, or the two deadlock.
        if await self.agents.find(actor.organization_id, agent_id, for_update=True) is None:
            raise NotFoundError("Agent", agent_id)
        if self.sleeptime is not None:
            await self.sleeptime.before_delete(self.session, actor, agent_id)
        await self.agents.delete(agent_id)
