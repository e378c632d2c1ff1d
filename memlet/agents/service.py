"""Agent lifecycle: read, list, update and delete; creation is `agents/creation.py`, model configs
`agents/model_configs.py`."""

from collections.abc import Mapping, Sequence
from functools import partial
from typing import cast

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.creation import (
    AgentCreator,
    compaction_after_model_change,
    merged_compaction_settings,
    new_secrets,
)
from memlet.agents.json_cache import AgentJsonCache, agent_key
from memlet.agents.list_filters import AgentFilters
from memlet.agents.managed_group_hook import ManagedGroupLookup
from memlet.agents.model_configs import ModelConfigs
from memlet.agents.page_json import agent_parts, join_page
from memlet.agents.parts import Group
from memlet.agents.repository import AgentLinks, AgentRepository
from memlet.agents.schemas import AgentState, CreateAgent, UpdateAgent
from memlet.agents.sleeptime_hook import SleeptimeHook
from memlet.agents.system_message import rebuild_prompts, refresh_system_message
from memlet.agents.views import (
    ALL_RELATIONSHIPS,
    DEFAULT_RELATIONSHIPS,
    MANAGED_GROUP,
    AgentRelations,
    ConfigMemo,
    agent_state,
)
from memlet.blocks.repository import BlockRepository
from memlet.crypto import PREFIX
from memlet.db import models as orm
from memlet.db.loaded import model_input
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.repository import FolderRepository
from memlet.folders.schemas import SourceCreate
from memlet.folders.service import FolderService
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import ApprovalRequestMessage, StoredMessage
from memlet.messages.views import approval_request_view
from memlet.tools.repository import ToolRepository
from memlet.tools.rules import dump_tool_rules, unique_rules
from memlet.tools.schemas import Tool


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
        self.configs = ModelConfigs(session, catalog)
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
        block_versions: dict[str, int] | None = None,
    ) -> dict[str, AgentRelations]:
        """Relationships for a page of agents: one query per relationship, never per agent.

        Tags, identity ids, folder ids and the manager flag come in one statement (or with the page, as ``links``);
        identity, folder and group rows are read only when some agent of the page has any (most have none).
        """
        agent_ids = [a.id for a in agents]
        if links is None:
            links = await self.agents.links_for(agent_ids, managers=MANAGED_GROUP in include)
        blocks = await self.blocks.for_agents(agent_ids, block_versions) if "agent.blocks" in include else {}
        tools = await self.tools.for_agents(agent_ids) if "agent.tools" in include else {}
        with_identities = [i for i in agent_ids if i in links and links[i].identity_ids]
        wants_identities = with_identities and "agent.identities" in include
        identities = await self.agents.identities_for(with_identities) if wants_identities else {}
        with_sources = [i for i in agent_ids if i in links and links[i].source_ids]
        folders = FolderRepository(self.session)
        sources = await folders.for_agents(with_sources) if with_sources and "agent.sources" in include else {}
        files: dict[str, list[orm.FileAgent]] = {}
        if with_sources and "agent.blocks" in include:
            for link in await FileAgentRepository(self.session).of_agents(with_sources):
                files.setdefault(link.agent_id, []).append(link)
        pending = await self._pending_approvals(agents) if "agent.pending_approval" in include else {}
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
                files=files.get(a.id, ()),
                identities=identities.get(a.id, []),
                include=include,
                secrets=self.catalog.keyring.reveal_secrets(a.secrets) if "agent.secrets" in include else (),
                managed_group=groups.get(a.id),
                pending_approval=pending.get(a.id),
            )
            for a in agents
        }

    async def _pending_approvals(self, agents: Sequence[orm.Agent]) -> dict[str, ApprovalRequestMessage]:
        """The approval request each agent waits on: its context's last message, when that is one (Letta's
        `include=agent.pending_approval`)."""
        last = [a.message_ids[-1] for a in agents if a.message_ids]
        rows = await MessageRepository(self.session).approval_requests(last)
        return {row.agent_id: approval_request_view(StoredMessage.model_validate(model_input(row))) for row in rows}

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
        page_rows, relations = await self._page(actor, filters, page, sort_by, include, {})
        memo = ConfigMemo()
        return [agent_state(agent, relations[agent.id], memo) for agent, _, _ in page_rows]

    async def list_page_json(
        self,
        actor: Actor,
        filters: AgentFilters,
        page: Page,
        *,
        sort_by: str,
        include: frozenset[str],
        cache: AgentJsonCache | None,
    ) -> bytes:
        """`list_page` as the JSON array FastAPI would send, each agent whose inputs are unchanged since it was last
        encoded taken from `cache` (`agents/json_cache.py`)."""
        versions: dict[str, int] = {}
        since = 0 if cache is None else cache.deleted.now()
        page_rows, relations = await self._page(actor, filters, page, sort_by, include, versions, unknown_cursors=True)
        memo = ConfigMemo()
        parts = []
        for agent, links, version in page_rows:
            rel = relations[agent.id]
            build = partial(_encoded, agent, rel, memo)
            found = (
                build()
                if cache is None
                else cache.parts(agent.id, agent_key(version, links, rel, versions), build, since)
            )
            parts.append((*found, cast(Sequence[Tool], rel.tools)))  # `relations` builds them as views
        return join_page(parts)

    async def _page(
        self,
        actor: Actor,
        filters: AgentFilters,
        page: Page,
        sort_by: str,
        include: frozenset[str],
        block_versions: dict[str, int],
        *,
        unknown_cursors: bool = False,
    ) -> tuple[list[tuple[orm.Agent, AgentLinks, int]], dict[str, AgentRelations]]:
        """A page of agents (each with its links and row version) and their relationships; with `unknown_cursors`
        a cursor that names no agent is ignored (`GET /v1/agents/`, as in Letta)."""
        page_rows = await self.agents.list_page_with_links(
            actor.organization_id,
            filters,
            page,
            sort_by=sort_by,
            managers=MANAGED_GROUP in include,
            ignore_unknown_cursors=unknown_cursors,
        )
        links = {agent.id: agent_links for agent, agent_links, _ in page_rows}
        relations = await self.relations([agent for agent, _, _ in page_rows], include, links, block_versions)
        return page_rows, relations

    async def count(self, actor: Actor, filters: AgentFilters) -> int:
        return await self.agents.count(actor.organization_id, filters)

    async def create(self, actor: Actor, req: CreateAgent, *, ignore_missing_tools: bool = False) -> AgentState:
        """Create an agent; with `ignore_missing_tools` (template deployments) unknown tools are left out, not a 404."""
        default_folder = f"{req.name} External Data Source"
        if req.include_default_source and await FolderRepository(self.session).find_by_name(
            actor.organization_id, default_folder
        ):
            raise ConflictError(f"Folder with name '{default_folder}' already exists")
        creator = AgentCreator(self.session, self.catalog, self.sleeptime, self.managed_groups)
        state = await creator.create(actor, req, ignore_missing_tools=ignore_missing_tools)
        # As in Letta: `folder_ids`, or the deprecated `source_ids` when it is empty.
        folder_ids = list(req.folder_ids or req.source_ids or [])
        if req.include_default_source:
            await self._add_default_folder(actor, state, default_folder, folder_ids)
        if folder_ids:
            await self._link_folders(actor, state.id, folder_ids)
        if folder_ids or req.include_default_source:
            return await self.get_state(actor, state.id, ALL_RELATIONSHIPS)
        return state

    async def _add_default_folder(self, actor: Actor, state: AgentState, name: str, folder_ids: list[str]) -> None:
        """The deprecated `include_default_source`: a new empty folder named after the agent, with its embedding
        config. As in Letta, it joins the requested folders (file tools and all) when there are some; alone it is
        linked without the file tools."""
        if state.embedding_config is None:
            raise BadRequestError(
                "INVALID_ARGUMENT: include_default_source needs an embedding (embedding or embedding_config)"
            )
        folders = FolderService(self.session, rebuild_prompts)
        folder = await folders.create(actor, SourceCreate(name=name, embedding_config=state.embedding_config))
        if folder_ids:
            folder_ids.append(folder.id)
        else:
            await folders.attach(actor, state.id, folder.id, file_tools=False)

    async def _link_folders(self, actor: Actor, agent_id: str, folder_ids: Sequence[str]) -> None:
        """Make `folder_ids` the agent's folders: each new one attached with its files (open, in the prompt) and
        the file tools, as `POST /agents/{id}/folders/attach/...` does; each other one detached. Letta's PATCH
        only rewrote the links, leaving the files and tools behind; its create attached them as here."""
        folders = FolderService(self.session, rebuild_prompts)
        current = [row.id for row in await FolderRepository(self.session).of_agent(agent_id)]
        wanted = list(dict.fromkeys(folder_ids))
        for folder_id in current:
            if folder_id not in wanted:
                await folders.detach(actor, agent_id, folder_id)
        for folder_id in wanted:
            if folder_id not in current:
                await folders.attach(actor, agent_id, folder_id)

    async def update(self, actor: Actor, agent_id: str, req: UpdateAgent) -> AgentState:
        agent = await self.agents.get_or_404(actor.organization_id, agent_id, for_update=True)
        # As in Letta, an explicit null leaves the field as it is (only `max_tokens`, read in `model_configs`, acts
        # on a null); a field is changed only by a value.
        fields = {name: value for name, value in req.model_dump(exclude_unset=True).items() if value is not None}
        if req.message_ids is not None:
            await self._check_own_messages(agent.id, req.message_ids)
        llm_config = await self.configs.updated_llm_config(actor, req, agent.llm_config or {}, agent.agent_type)
        if llm_config is not None:
            agent.compaction_settings = compaction_after_model_change(
                agent.compaction_settings, agent.llm_config or {}, llm_config, req.compaction_settings
            )
            agent.llm_config = llm_config
            agent.model_settings = self.catalog.model_settings_for(llm_config)
        if {"embedding", "embedding_config"} & fields.keys():
            agent.embedding_config = await self.configs.embedding_config(actor, req)
        await self._apply_links(actor, agent, req)
        folder_ids = req.folder_ids if req.folder_ids is not None else req.source_ids
        if folder_ids is not None:
            await self._link_folders(actor, agent.id, folder_ids)
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
        if req.response_format is not None:
            agent.response_format = req.response_format.model_dump(mode="json")
        if req.tool_rules is not None:
            agent.tool_rules = unique_rules(dump_tool_rules(req.tool_rules))  # repeats dropped, as Letta stores them
        if req.compaction_settings is not None:
            handle = (agent.llm_config or {}).get("handle")
            agent.compaction_settings = merged_compaction_settings(
                agent.compaction_settings, req.compaction_settings, handle
            )
        self._write_secrets(agent, req)
        if req.message_ids is not None:
            agent.message_ids = list(req.message_ids)
        if req.system is not None:
            agent.system = req.system
        agent.last_updated_by_id = actor.user_id
        if {"system", "block_ids", "tool_rules", "timezone"} & fields.keys():
            # As Letta's rebuild (`rebuild_system_prompt_async`): the tool-rule section and, on Anthropic models,
            # line-numbered values; the last recompile time stays.
            await refresh_system_message(self.session, agent, update_timestamp=False, with_rules=True)
        await self.session.flush()
        if req.enable_sleeptime and self.sleeptime is not None:
            await self.sleeptime.enable(self.session, actor, agent.id)
        return await self.get_state(actor, agent.id, ALL_RELATIONSHIPS)

    def _write_secrets(self, agent: orm.Agent, req: UpdateAgent) -> None:
        keyring = self.catalog.keyring
        sent = req.secrets if req.secrets is not None else req.tool_exec_environment_variables
        if sent is not None:
            agent.secrets = keyring.seal_secrets(new_secrets(sent))
        elif keyring.enabled and any(not str(s.get("value") or "").startswith(PREFIX) for s in agent.secrets or []):
            # Rows stored before encryption was turned on are encrypted the next time the agent is written.
            agent.secrets = keyring.reseal_secrets(agent.secrets)

    async def _check_own_messages(self, agent_id: str, message_ids: Sequence[str]) -> None:
        """An agent's context may only hold its own messages: another agent's id (or an unknown one) is a 400."""
        if foreign := await MessageRepository(self.session).foreign_ids(agent_id, message_ids):
            raise BadRequestError(
                f"INVALID_ARGUMENT: message_ids must be messages of agent {agent_id}; not its own: {', '.join(foreign)}"
            )

    async def _apply_links(self, actor: Actor, agent: orm.Agent, req: UpdateAgent) -> None:
        if req.tags is not None:
            await self.agents.set_tags(agent.id, req.tags)
        if req.identity_ids is not None:
            await self.agents.set_identities(agent.id, req.identity_ids)
        if req.tool_ids is not None:
            tools = await self.tools.by_ids(actor.organization_id, req.tool_ids)
            if missing := sorted(set(req.tool_ids) - {t.id for t in tools}):
                raise NotFoundError("Tool", missing[0])
            current = {t.id for t in (await self.tools.for_agents([agent.id])).get(agent.id, [])}
            for tool_id in current - set(req.tool_ids):
                await self.tools.detach(agent.id, tool_id)
            await self.tools.attach(agent.id, [t for t in req.tool_ids if t not in current])
        if req.block_ids is not None:
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


def _encoded(agent: orm.Agent, rel: AgentRelations, memo: ConfigMemo) -> tuple[bytes, bytes]:
    """The agent's JSON around its tools (`page_json.agent_parts`), built from its row and relationships."""
    return agent_parts(agent_state(agent, rel, memo))
