"""Creating an agent: its row, new and attached blocks, tools and tool rules, tags, identities and initial
messages, each table written once, and the response built from what was written (nothing is read back)."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.initial_messages import initial_messages
from memlet.agents.managed_group_hook import ManagedGroupLookup
from memlet.agents.model_configs import ModelConfigs
from memlet.agents.new_agent_repository import NewAgentRepository
from memlet.agents.parts import CompactionSettings, Group
from memlet.agents.repository import AgentRepository
from memlet.agents.schemas import AgentState, CreateAgent, InternalTemplateAgentCreate
from memlet.agents.sleeptime_hook import SleeptimeHook
from memlet.agents.views import AgentRelations, agent_state
from memlet.blocks.repository import BlockRepository
from memlet.blocks.service import new_block
from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.messages.repository import MessageRepository
from memlet.prompt.memory import system_message_text
from memlet.prompt.prompts import SUMMARIZER_INSTRUCTIONS, default_system_prompt
from memlet.tools.base_tools import (
    base_tool_names_for,
    default_tool_rules_for,
    includes_base_tool_rules,
    multi_agent_tool_names,
)
from memlet.tools.repository import ToolRepository
from memlet.tools.rules import dump_tool_rules, unique_rules

# Letta's default descriptions for the two classic blocks.
DEFAULT_BLOCK_DESCRIPTIONS = {
    "human": "The human block: Stores key details about the person you are conversing with, allowing for more "
    "personalized and friend-like conversation.",
    "persona": "The persona block: Stores details about your current persona, guiding how you behave and respond. "
    "This helps you to maintain consistency and personality in your interactions.",
}

# Models Letta trusts with several `run_first` rules (its "structured output" models, compared by exact name).
STRUCTURED_OUTPUT_MODELS = frozenset({"gpt-4o", "gpt-4o-mini"})
MULTIPLE_INIT_RULES = (
    "Multiple initial tools are not supported for non-structured models. Please use only one initial tool rule."
)


def check_init_rules(rules: Sequence[dict[str, Any]], model: str) -> None:
    """Letta refuses a new agent with more than one `run_first` rule (duplicates count) unless its model is one of
    `STRUCTURED_OUTPUT_MODELS`: a ValueError, so a 400. Only creation checks it; a PATCH may add more."""
    if model not in STRUCTURED_OUTPUT_MODELS and sum(r.get("type") == "run_first" for r in rules) > 1:
        raise BadRequestError(MULTIPLE_INIT_RULES)


def default_compaction_settings(settings: CompactionSettings | None, handle: str | None) -> dict[str, Any]:
    """A new agent's stored compaction settings: as in Letta, always present, with the model and prompt filled in.

    memlet summarizes with the agent's own model and its own instructions, so those are the defaults it reports.
    """
    filled = settings or CompactionSettings()
    defaults = {"model": filled.model or handle, "prompt": filled.prompt or SUMMARIZER_INSTRUCTIONS}
    return filled.model_copy(update=defaults).model_dump(mode="json")


def merged_compaction_settings(
    stored: dict[str, Any] | None, update: CompactionSettings, handle: str | None
) -> dict[str, Any]:
    """A PATCH's `compaction_settings` merged as Letta merges them: the fields it sends over the stored ones, and a
    new `mode` brings that mode's default prompt (unless the PATCH sends a prompt too: Letta replaced it as well)."""
    if stored is None:
        return default_compaction_settings(update, handle)
    sent = update.model_dump(mode="json", include=update.model_fields_set)
    merged = {**stored, **sent}
    if sent.get("mode", stored.get("mode")) != stored.get("mode") and "prompt" not in sent:
        merged["prompt"] = None  # the new mode's default, filled in below
    return default_compaction_settings(CompactionSettings.model_validate(merged), handle)


# The light summarizer Letta stored for a new agent of each provider; an agent carried over from Letta may hold one.
LETTA_SUMMARIZER_DEFAULTS = {
    "anthropic": "anthropic/claude-haiku-4-5",
    "openai": "openai/gpt-5-mini",
    "google_ai": "google_ai/gemini-2.5-flash",
    "letta": "letta/auto",
}


def _provider(config: dict[str, Any]) -> Any:
    return config.get("provider_name") or config.get("model_endpoint_type")


def compaction_after_model_change(
    stored: dict[str, Any] | None, old: dict[str, Any], new: dict[str, Any], update: CompactionSettings | None
) -> dict[str, Any] | None:
    """The stored compaction settings once the agent moves from llm_config `old` to `new`. As in Letta, a move to
    another provider takes a default-derived summarizer `model` (none, the old handle, or Letta's light model of the
    old provider) along: to the new default, memlet's being the new handle, and drops its `model_settings`. A model
    the PATCH names itself, a custom one, or a move within one provider leaves them as they are."""
    if update is not None and "model" in update.model_fields_set:
        return stored
    if _provider(old) == _provider(new):
        return stored
    current = (stored or {}).get("model")
    derived = {None, old.get("handle"), old.get("model"), LETTA_SUMMARIZER_DEFAULTS.get(str(_provider(old)))}
    if current not in derived:
        return stored
    if stored is None:
        return default_compaction_settings(None, new.get("handle"))
    return {**stored, "model": new.get("handle"), "model_settings": None}


def new_secrets(values: dict[str, str] | None) -> list[dict[str, Any]]:
    """Stored secret entries (values still in plaintext) from a request's ``{key: value}``."""
    return [
        {"id": ids.new_id("agent-env"), "key": k, "value": v, "description": None} for k, v in (values or {}).items()
    ]


def _set_text(values: set[str]) -> str:
    """`str()` of a Python set of strings, sorted so the text is stable."""
    return "{" + ", ".join(repr(v) for v in sorted(values)) + "}"


# Agents tagged as another agent's subagent are always created hidden, as in Letta.
SUBAGENT_ROLE_TAG = "role:subagent"


class AgentCreator:
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

    def _with_default_handles(self, req: CreateAgent) -> CreateAgent:
        """The request with the server's default model and embedding handles where it names neither, as in Letta."""
        defaults: dict[str, str] = {}
        if not req.model and not req.llm_config and self.catalog.default_llm_handle:
            defaults["model"] = self.catalog.default_llm_handle
        if not req.embedding and not req.embedding_config and self.catalog.default_embedding_handle:
            defaults["embedding"] = self.catalog.default_embedding_handle
        return req.model_copy(update=defaults) if defaults else req

    async def _tools_for(self, actor: Actor, req: CreateAgent, *, ignore_missing: bool) -> list[orm.Tool]:
        names = list(req.tools or [])
        if req.include_base_tools:
            names = base_tool_names_for(req.agent_type, enable_sleeptime=bool(req.enable_sleeptime)) + names
            if req.agent_type == "letta_v1_agent" and not req.enable_sleeptime:
                names = [n for n in names if n != "send_message"]  # Letta drops it, even when the caller names it
        if req.include_multi_agent_tools:  # with or without the base tools, as in Letta
            names += [n for n in multi_agent_tool_names() if n not in names]
        by_name = await self.tools.by_names(actor.organization_id, names)
        by_id = await self.tools.by_ids(actor.organization_id, req.tool_ids or [])
        if not ignore_missing:
            # Letta's ValueErrors (a 400), the missing names or ids as the Python set it printed (spaces included).
            if missing := set(names) - {t.name for t in by_name}:
                raise BadRequestError(f"Tools not found by name: {_set_text(missing)}")
            if missing := set(req.tool_ids or []) - {t.id for t in by_id}:
                raise BadRequestError(f"Tools not found by id:   {_set_text(missing)}")
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
            base_tools=req.include_base_tools,
        ):
            rules += default_tool_rules_for(req.agent_type, names, model=model, include_base_tool_rules=True)
        rules += [
            {"tool_name": t.name, "type": "requires_approval", "prompt_template": None}
            for t in tools
            if t.default_requires_approval
        ]
        check_init_rules(rules, model)
        return unique_rules(rules)

    async def _blocks_for(self, actor: Actor, req: CreateAgent) -> tuple[list[orm.Block], list[orm.Block]]:
        new = [
            new_block(
                actor, b.model_copy(update={"description": b.description or DEFAULT_BLOCK_DESCRIPTIONS.get(b.label)})
            )
            for b in req.memory_blocks or []
        ]
        found = {b.id: b for b in await self.blocks.by_ids(actor.organization_id, req.block_ids or [])}
        existing = [found[i] for i in dict.fromkeys(req.block_ids or []) if i in found]  # attached in the asked order
        missing = sorted(set(req.block_ids or []) - set(found))
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
        req = self._with_default_handles(req)
        llm_config = await self.configs.llm_config(actor, req)
        if llm_config is None:
            raise BadRequestError("INVALID_ARGUMENT: Must specify either model or llm_config in request")
        llm_config = self.catalog.apply_reasoning(llm_config, req.reasoning, req.agent_type)
        embedding_config = await self.configs.embedding_config(actor, req)
        identity_ids = list(dict.fromkeys(req.identity_ids or []))
        identities = await self.agents.identities_by_ids(actor.organization_id, identity_ids)
        if missing := sorted(set(identity_ids) - {i.id for i in identities}):
            raise NotFoundError("Identity", missing[0])
        tools = await self._tools_for(actor, req, ignore_missing=ignore_missing_tools)
        template = req if isinstance(req, InternalTemplateAgentCreate) else None
        new_blocks, existing_blocks = await self._blocks_for(actor, req)
        secrets = new_secrets(req.secrets or req.tool_exec_environment_variables)
        agent = orm.Agent(
            id=ids.new_id(ids.Prefix.AGENT),
            organization_id=actor.organization_id,
            name=req.name,
            description=req.description,
            agent_type=req.agent_type,
            # As Letta: only a missing system prompt gets the default; "" stays (the prompt is then the memory alone).
            system=req.system if req.system is not None else default_system_prompt(req.agent_type),
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
            # Letta forces it on for workflow agents.
            message_buffer_autoclear=req.message_buffer_autoclear or req.agent_type == "workflow_agent",
            enable_sleeptime=req.enable_sleeptime,
            timezone=req.timezone or "UTC",
            max_files_open=req.max_files_open,
            per_file_view_window_char_limit=req.per_file_view_window_char_limit,
            hidden=True if SUBAGENT_ROLE_TAG in (req.tags or []) else req.hidden,  # Letta hides subagents
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
            message_ids=[],
        )
        # Everything is known here, so each table gets one INSERT and the response is built without reading back.
        blocks = [*new_blocks, *existing_blocks]
        tags = sorted(dict.fromkeys(req.tags or []))
        messages = initial_messages(agent, req.initial_message_sequence, include_base_tools=req.include_base_tools)
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
        await NewAgentRepository(self.session).insert(
            agent, new_blocks, blocks, [t.id for t in tools], tags, identity_ids
        )
        await MessageRepository(self.session).add(messages)
        relations = AgentRelations(blocks=blocks, tools=tools, tags=tags, identities=identities, secrets=secrets)
        if req.enable_sleeptime and self.sleeptime is not None:
            await self.sleeptime.enable(self.session, actor, agent.id)
            relations.managed_group = await self._managed_group(agent.id)
        return agent_state(agent, relations)

    async def _managed_group(self, agent_id: str) -> Group | None:
        if self.managed_groups is None:
            return None
        return (await self.managed_groups(self.session, [agent_id])).get(agent_id)
