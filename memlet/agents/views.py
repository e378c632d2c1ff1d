"""Stored agent rows (plus their loaded relationships) as the public ``AgentState``."""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel

from memlet.agents.parts import AgentEnvironmentVariable, Group
from memlet.agents.schemas import AgentState
from memlet.blocks.file_blocks import file_blocks
from memlet.blocks.schemas import Block, Memory
from memlet.db import models as orm
from memlet.db.base import Base
from memlet.db.loaded import column_keys, complete, model_input
from memlet.folders.schemas import Source
from memlet.identities.schemas import Identity
from memlet.messages.schemas import ApprovalRequestMessage
from memlet.providers.schemas import EmbeddingConfig, LLMConfig
from memlet.tools.schemas import Tool

MANAGED_GROUP = "agent.managed_group"
ALL_RELATIONSHIPS = frozenset(
    {"agent.blocks", "agent.tools", "agent.sources", "agent.tags", "agent.identities", "agent.secrets", MANAGED_GROUP}
)
# What a response carries when the client names no relationship. Letta adds the secrets' plaintext values here
# too; memlet sends them only when asked (`include=agent.secrets`) and in the create/modify responses.
DEFAULT_RELATIONSHIPS = ALL_RELATIONSHIPS - {"agent.secrets"}


@dataclass
class AgentRelations:
    """What a page of agents needs besides the row, each loaded for the whole page in one query."""

    blocks: Sequence[orm.Block] = ()
    tools: Sequence[orm.Tool | Tool] = ()
    tags: Sequence[str] = ()
    sources: Sequence[orm.Source] = ()  # attached folders, in attachment order
    files: Sequence[orm.FileAgent] = ()  # the files of those folders as the agent sees them (with "agent.blocks")
    identities: Sequence[orm.Identity] = ()
    include: frozenset[str] = field(default_factory=lambda: ALL_RELATIONSHIPS)
    # The agent's secrets with their values decrypted (only when "agent.secrets" is included).
    secrets: Sequence[Mapping[str, Any]] = ()
    managed_group: Group | None = None  # the group the agent manages (only when "agent.managed_group" is included)
    pending_approval: ApprovalRequestMessage | None = None  # only when "agent.pending_approval" is included


def loaded(row: Base) -> Mapping[str, Any]:
    """An ORM row's column values by attribute name: its ``__dict__`` when every column is loaded (read ~3x faster
    than its attributes, by this module and by pydantic), else its attributes, read only when asked for (an expired
    column would be a lazy load)."""
    return row.__dict__ if complete(row) else _Attributes(row)


def block_view(row: orm.Block) -> Block:
    return Block.model_validate(model_input(row))


class _Attributes(Mapping[str, Any]):
    def __init__(self, row: Base) -> None:
        self.row, self.columns = row, column_keys(type(row))

    def __getitem__(self, key: str) -> Any:
        if key not in self.columns:
            raise KeyError(key)
        return getattr(self.row, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)


def secrets_of(agent: orm.Agent, secrets: Sequence[Mapping[str, Any]]) -> list[AgentEnvironmentVariable]:
    # value_enc stays null: the stored ciphertext is of no use to a client.
    return [AgentEnvironmentVariable.model_validate({**s, "agent_id": agent.id, "value_enc": None}) for s in secrets]


def source_of(row: orm.Source) -> Source:
    fields = ("name", "description", "instructions", "id", "embedding_config", "created_by_id", "last_updated_by_id")
    return Source.model_validate(
        {
            **{f: getattr(row, f) for f in fields},
            "metadata": row.metadata_,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
    )


class ConfigMemo:
    """The agents of a page usually hold equal ``llm_config`` and ``embedding_config`` values: each distinct one is
    validated once per page and the page's ``AgentState``s share it (they are only serialized, never changed)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[type, bytes], BaseModel] = {}

    def __call__(self, model: type[BaseModel], value: dict[str, Any] | None) -> Any:
        if not value:
            return value
        key = (model, orjson.dumps(value))  # key order too: equal keys give byte-equal JSON
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = model.model_validate(value)
        return found


def agent_state(agent: orm.Agent, rel: AgentRelations, memo: ConfigMemo | None = None) -> AgentState:
    inc = rel.include
    a = loaded(agent)
    blocks = [block_view(b) for b in rel.blocks] if "agent.blocks" in inc else []
    secrets = secrets_of(agent, rel.secrets) if "agent.secrets" in inc else []
    identities = [Identity.model_validate(i) for i in rel.identities] if "agent.identities" in inc else []
    llm = a["llm_config"] or {}
    return AgentState.model_validate(
        {
            "created_by_id": a["created_by_id"],
            "last_updated_by_id": a["last_updated_by_id"],
            "created_at": a["created_at"],
            "updated_at": a["updated_at"],
            "id": a["id"],
            "name": a["name"],
            "tool_rules": a["tool_rules"] or [],
            "message_ids": a["message_ids"] or [],
            "system": a["system"],
            "agent_type": a["agent_type"],
            "llm_config": memo(LLMConfig, llm) if memo else llm,
            "embedding_config": memo(EmbeddingConfig, a["embedding_config"]) if memo else a["embedding_config"],
            "model": llm.get("handle"),
            "embedding": (a["embedding_config"] or {}).get("handle"),
            "model_settings": a["model_settings"],
            "compaction_settings": a["compaction_settings"],
            "response_format": a["response_format"],
            "description": a["description"],
            "metadata": a["metadata_"],
            "memory": Memory(
                agent_type=a["agent_type"],
                blocks=blocks,
                file_blocks=file_blocks(agent, rel.files) if rel.files and "agent.blocks" in inc else [],
            ),
            "blocks": blocks,
            "tools": [t if isinstance(t, Tool) else Tool.model_validate(t) for t in rel.tools]
            if "agent.tools" in inc
            else [],
            "sources": [source_of(s) for s in rel.sources] if "agent.sources" in inc else [],
            "tags": list(rel.tags) if "agent.tags" in inc else [],
            "tool_exec_environment_variables": secrets,
            "secrets": secrets,
            "project_id": a["project_id"],
            "template_id": a["template_id"],
            "base_template_id": a["base_template_id"],
            "deployment_id": a["deployment_id"],
            "entity_id": a["entity_id"],
            "identity_ids": [i.id for i in rel.identities] if "agent.identities" in inc else [],
            "identities": identities,
            "pending_approval": rel.pending_approval if "agent.pending_approval" in inc else None,
            "message_buffer_autoclear": a["message_buffer_autoclear"],
            "enable_sleeptime": a["enable_sleeptime"],
            "multi_agent_group": rel.managed_group if MANAGED_GROUP in inc else None,
            "managed_group": rel.managed_group if MANAGED_GROUP in inc else None,
            "last_run_completion": a["last_run_completion"],
            "last_run_duration_ms": a["last_run_duration_ms"],
            "last_stop_reason": a["last_stop_reason"],
            "timezone": a["timezone"],
            "max_files_open": a["max_files_open"],
            "per_file_view_window_char_limit": a["per_file_view_window_char_limit"],
            "hidden": a["hidden"],
        }
    )


# Letta's legacy `include_relationships` names and what each loads (its `orm/agent.py` to_pydantic_async); other
# names, `agent.*` ones included, load nothing.
LEGACY_RELATIONSHIPS: Mapping[str, frozenset[str]] = {
    "tags": frozenset({"agent.tags"}),
    "memory": frozenset({"agent.blocks", "agent.tags"}),
    "tools": frozenset({"agent.tools"}),
    "sources": frozenset({"agent.sources"}),
    "identity_ids": frozenset({"agent.identities"}),
    "multi_agent_group": frozenset({MANAGED_GROUP}),
    "tool_exec_environment_variables": frozenset({"agent.secrets"}),
    "secrets": frozenset({"agent.secrets"}),
}


def expand_include(include: Sequence[str] | None) -> frozenset[str]:
    """The relationships an ``include=`` list loads: as in Letta, ``agent.blocks`` brings the tags too."""
    names = frozenset(include or ())
    return (names | {"agent.tags"}) if "agent.blocks" in names else names


def parse_include(
    include: Sequence[str] | None, include_relationships: Sequence[str] | None, *, sdk_v1: bool
) -> frozenset[str]:
    """Which relationships to serialize: those of ``include=`` and those of the legacy ``include_relationships``,
    which means all of them when it is absent, except for 1.x clients. Letta's serializer meant the same, but its
    query left out whatever ``include=`` did not name (a README compatibility note says why memlet does not)."""
    if include_relationships is None:
        legacy = frozenset() if sdk_v1 else DEFAULT_RELATIONSHIPS
    else:
        legacy = frozenset().union(*(LEGACY_RELATIONSHIPS.get(name, ()) for name in include_relationships))
    return legacy | expand_include(include)
