"""The smaller wire models embedded in `AgentState`, and the context-window report (Letta 0.16.8 names).

`Group` is the one wire model of a group: the `/v1/groups` routes answer with it, and an agent's
`managed_group` / `multi_agent_group` carry it.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memlet.ids import new_id
from memlet.messages.schemas import StoredMessage
from memlet.providers.schemas import ModelSettings

AgentType = Literal[
    "memgpt_agent",
    "memgpt_v2_agent",
    "letta_v1_agent",
    "react_agent",
    "workflow_agent",
    "split_thread_agent",
    "sleeptime_agent",
    "voice_convo_agent",
    "voice_sleeptime_agent",
]
ManagerType = Literal["round_robin", "supervisor", "dynamic", "sleeptime", "voice_sleeptime", "swarm"]
CompactionMode = Literal["all", "sliding_window", "self_compact_all", "self_compact_sliding_window"]

_DEPRECATED: dict[str, Any] = {"deprecated": True}
_WIRE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True, protected_namespaces=())


class CompactionSettings(BaseModel):
    """How the agent summarizes when its context window overflows."""

    model_config = _WIRE

    model: str | None = None
    model_settings: ModelSettings | None = None
    prompt: str | None = None
    prompt_acknowledgement: bool = False
    clip_chars: int | None = 50_000
    mode: CompactionMode = "sliding_window"
    sliding_window_percentage: float = 0.3


class AgentEnvironmentVariable(BaseModel):
    """One per-agent secret, as listed in `AgentState.secrets`."""

    model_config = _WIRE

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: str = Field(default_factory=lambda: new_id("agent-env"))
    key: str
    value: str
    description: str | None = None
    value_enc: str | None = None
    agent_id: str


class Group(BaseModel):
    """A group of agents under one manager pattern (the body of every `/v1/groups` route)."""

    model_config = _WIRE

    id: str
    manager_type: ManagerType
    agent_ids: list[str]
    description: str
    project_id: str | None = None
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    shared_block_ids: list[str] = Field(default_factory=list, json_schema_extra=_DEPRECATED)
    manager_agent_id: str | None = None
    termination_token: str | None = None
    max_turns: int | None = None
    sleeptime_agent_frequency: int | None = None
    turns_counter: int | None = None
    last_processed_message_id: str | None = None
    max_message_buffer_length: int | None = None
    min_message_buffer_length: int | None = None
    hidden: bool | None = None


class ContextWindowOverview(BaseModel):
    """Body of `GET /v1/agents/{agent_id}/context`: what the next LLM call would hold, section by section."""

    model_config = _WIRE

    context_window_size_max: int
    context_window_size_current: int
    num_messages: int
    num_archival_memory: int
    num_recall_memory: int
    num_tokens_external_memory_summary: int
    external_memory_summary: str
    num_tokens_system: int
    system_prompt: str
    num_tokens_core_memory: int
    core_memory: str
    num_tokens_memory_filesystem: int = 0
    memory_filesystem: str | None = None
    num_tokens_tool_usage_rules: int = 0
    tool_usage_rules: str | None = None
    num_tokens_directories: int = 0
    directories: str | None = None
    num_tokens_summary_memory: int
    summary_memory: str | None = None
    num_tokens_functions_definitions: int
    # OpenAI tool entries: {"type": "function", "function": {...}}, passed through as the loop built them.
    functions_definitions: list[dict[str, Any]] | None
    num_tokens_messages: int
    messages: list[StoredMessage]
