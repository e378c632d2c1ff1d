"""Letta's v2 agent file (`AgentFileSchema`) as pydantic models, for reading an upload and writing an export.

Ids inside a file are file-local (`agent-0`, `block-3`, `message-12`...). Blocks, tools, files, file-agent links
and tool rules forbid unknown keys, as Letta's do; agents, messages, sources, groups and MCP servers ignore them.
Every top-level list is required: a file without `groups` is not an agent file.
"""

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memlet.agents.parts import AgentType
from memlet.groups.schemas import (
    DynamicManager,
    RoundRobinManager,
    SleeptimeManager,
    SupervisorManager,
    VoiceSleeptimeManager,
)
from memlet.providers.schemas import EmbeddingConfig, LLMConfig, ResponseFormat
from memlet.tools.rules import ToolRule

_FORBID = ConfigDict(extra="forbid", populate_by_name=True, protected_namespaces=())
_IGNORE = ConfigDict(extra="ignore", populate_by_name=True, protected_namespaces=())


def file_id(prefix: str, value: str) -> str:
    """A file-local id must read `<prefix>-<integer>`."""
    if not re.fullmatch(rf"{re.escape(prefix)}-\d+", value):
        raise ValueError(f"must be a file id of the form '{prefix}-<integer>', got {value!r}")
    return value


class BlockSchema(BaseModel):
    model_config = _FORBID

    id: str
    label: str
    value: str = ""
    limit: int = Field(default=20000, ge=1)
    description: str | None = None
    read_only: bool = False
    hidden: bool | None = None
    is_template: bool = False
    template_name: str | None = None
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    entity_id: str | None = None
    project_id: str | None = None
    preserve_on_migration: bool | None = False
    metadata: dict[str, Any] | None = Field(default_factory=dict)
    tags: list[str] | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("block", v)))


class ToolSchema(BaseModel):
    model_config = _FORBID

    id: str
    name: str
    tool_type: str = "custom"
    description: str | None = None
    source_type: str | None = None
    source_code: str | None = None
    json_schema: dict[str, Any] | None = None
    args_json_schema: dict[str, Any] | None = None
    return_char_limit: int | None = None
    pip_requirements: list[dict[str, Any]] | None = None
    npm_requirements: list[dict[str, Any]] | None = None
    default_requires_approval: bool | None = None
    enable_parallel_execution: bool | None = False
    tags: list[str] = Field(default_factory=list)
    metadata_: dict[str, Any] | None = None
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    project_id: str | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("tool", v)))


class ToolReturnSchema(BaseModel):
    model_config = _IGNORE

    tool_call_id: str | None = None
    status: str = "success"
    stdout: list[str] | None = None
    stderr: list[str] | None = None
    func_response: Any = None


class MessageSchema(BaseModel):
    model_config = _IGNORE

    id: str
    type: str | None = "message"
    role: str
    content: list[dict[str, Any]] | str | None = None
    name: str | None = None
    otid: str | None = None
    sender_id: str | None = None
    batch_item_id: str | None = None
    group_id: str | None = None
    model: str | None = None
    agent_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_returns: list[ToolReturnSchema] | None = None
    created_at: datetime | None = None
    approve: bool | None = None
    approval_request_id: str | None = None
    denial_reason: str | None = None
    approvals: list[dict[str, Any]] | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("message", v)))

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value not in ("system", "user", "assistant", "tool", "approval"):
            raise ValueError(f"unknown message role {value!r}")
        return value


class FileAgentSchema(BaseModel):
    model_config = _FORBID

    id: str | None = None
    agent_id: str
    file_id: str
    source_id: str
    file_name: str
    is_open: bool = True
    visible_content: str | None = None
    last_accessed_at: datetime | None = None
    start_line: int | None = None
    end_line: int | None = None


class AgentSchema(BaseModel):
    """An agent: `CreateAgent`'s fields plus the file-local links and its messages."""

    model_config = _IGNORE

    id: str
    name: str
    agent_type: AgentType = "memgpt_v2_agent"
    system: str | None = None
    description: str | None = None
    metadata: dict[str, Any] | None = None
    llm_config: LLMConfig | None = None
    embedding_config: EmbeddingConfig | None = None
    model: str | None = None
    embedding: str | None = None
    tool_rules: list[ToolRule] | None = None
    tags: list[str] | None = None
    message_buffer_autoclear: bool = False
    timezone: str | None = None
    max_files_open: int | None = None
    per_file_view_window_char_limit: int | None = None
    response_format: ResponseFormat | None = None
    enable_sleeptime: bool | None = None
    hidden: bool | None = None
    secrets: dict[str, str | None] | None = None
    tool_exec_environment_variables: dict[str, str | None] | None = None
    project_id: str | None = None
    tool_ids: list[str] = Field(default_factory=list)
    block_ids: list[str] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    folder_ids: list[str] | None = None
    in_context_message_ids: list[str] = Field(default_factory=list)
    messages: list[MessageSchema] = Field(default_factory=list)
    files_agents: list[FileAgentSchema] = Field(default_factory=list)
    group_ids: list[str] = Field(default_factory=list)

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("agent", v)))


class SourceSchema(BaseModel):
    model_config = _IGNORE

    id: str
    name: str
    description: str | None = None
    instructions: str | None = None
    metadata: dict[str, Any] | None = None
    embedding_config: EmbeddingConfig | None = None
    embedding: str | None = None
    embedding_chunk_size: int | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("source", v)))


class FileSchema(BaseModel):
    model_config = _FORBID

    id: str
    source_id: str
    file_name: str | None = None
    original_file_name: str | None = None
    file_path: str | None = None
    file_type: str | None = None
    file_size: int | None = None
    file_creation_date: str | None = None
    file_last_modified_date: str | None = None
    processing_status: str | None = None
    error_message: str | None = None
    total_chunks: int | None = None
    chunks_embedded: int | None = None
    content: str | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("file", v)))


class SupervisorManagerSchema(SupervisorManager):
    manager_agent_id: str  # a file id here, as in every config below


class DynamicManagerSchema(DynamicManager):
    manager_agent_id: str


class SleeptimeManagerSchema(SleeptimeManager):
    manager_agent_id: str


class VoiceSleeptimeManagerSchema(VoiceSleeptimeManager):
    manager_agent_id: str


ManagerConfigSchema = Annotated[
    RoundRobinManager
    | SupervisorManagerSchema
    | DynamicManagerSchema
    | SleeptimeManagerSchema
    | VoiceSleeptimeManagerSchema,
    Field(discriminator="manager_type"),
]


class GroupSchema(BaseModel):
    """A group: `GroupCreate` with file ids for its agents, its manager and its shared blocks."""

    model_config = _IGNORE

    id: str
    agent_ids: list[str]
    description: str = ""
    manager_config: ManagerConfigSchema | None = None  # none: round robin
    project_id: str | None = None
    shared_block_ids: list[str] = Field(default_factory=list)
    hidden: bool | None = None

    _id = field_validator("id")(classmethod(lambda cls, v: file_id("group", v)))


class MCPServerSchema(BaseModel):
    """An MCP server as a file carries it: never a token, custom headers or stdio `env`."""

    model_config = _IGNORE

    id: str
    server_type: str | None = None
    server_name: str
    server_url: str | None = None
    stdio_config: dict[str, Any] | None = None
    metadata_: dict[str, Any] | None = None


class SkillSchema(BaseModel):
    model_config = _IGNORE

    name: str
    files: dict[str, str] | None = None
    source_url: str | None = None


class AgentFileSchema(BaseModel):
    """The whole file. Unknown top-level keys are ignored."""

    model_config = _IGNORE

    agents: list[AgentSchema]
    groups: list[GroupSchema]
    blocks: list[BlockSchema]
    files: list[FileSchema]
    sources: list[SourceSchema]
    tools: list[ToolSchema]
    mcp_servers: list[MCPServerSchema]
    skills: list[SkillSchema] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None


class ImportedAgentsResponse(BaseModel):
    agent_ids: list[str]


class ExportAgentRequest(BaseModel):
    """Body of `POST /v1/agents/{agent_id}/export`."""

    model_config = _IGNORE

    skills: list[SkillSchema] = Field(default_factory=list)
    conversation_id: str | None = None
    scrub_messages: bool = False
