"""Wire models of the agents API: `AgentState`, `CreateAgent`, `UpdateAgent` (Letta 0.16.8 names and defaults).

`AgentState` keeps every field Letta serves, deprecated ones included (`memory`, `llm_config`, `sources`,
`tool_exec_environment_variables`, `identity_ids`, `multi_agent_group`...), because letta-client reads them.
The smaller models it embeds (secrets, groups, compaction settings, context window) live in
`memlet.agents.parts`; `sources` are `memlet.folders.schemas.Source`.

Invalid values that Letta reports as `LettaInvalidArgumentError` raise `BadRequestError` (400, "INVALID_ARGUMENT:
..."); the ones Letta reports through pydantic stay `ValueError`s and become 422s.
"""

import random
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from memlet.agents.parts import (
    AgentEnvironmentVariable,
    AgentType,
    CompactionSettings,
    Group,
)
from memlet.blocks.schemas import Block, CreateBlock, Memory
from memlet.errors import BadRequestError
from memlet.folders.line_view import file_defaults_for_context_window
from memlet.folders.schemas import Source
from memlet.identities.schemas import Identity
from memlet.ids import Prefix, id_pattern
from memlet.messages.packing import clock_zone
from memlet.messages.requests import MessageCreate
from memlet.messages.schemas import ApprovalRequestMessage, StopReasonType
from memlet.providers.schemas import EmbeddingConfig, LLMConfig, ModelSettings, ResponseFormat
from memlet.tools.rules import ToolRule
from memlet.tools.schemas import Tool

MAX_FILES_OPEN_LIMIT = 1000
MAX_PER_FILE_VIEW_WINDOW_CHAR_LIMIT = 2_147_483_647  # the column is an int4

ToolIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.TOOL))]
BlockIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.BLOCK))]
SourceIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.SOURCE))]
IdentityIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.IDENTITY))]
MessageIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.MESSAGE))]

# Relations a client may ask for with `?include=` on the agent read endpoints.
AgentRelationship = Literal[
    "agent.blocks",
    "agent.identities",
    "agent.managed_group",
    "agent.pending_approval",
    "agent.secrets",
    "agent.sources",
    "agent.tags",
    "agent.tools",
]

_DEPRECATED: dict[str, Any] = {"deprecated": True}
_REQUEST = ConfigDict(populate_by_name=True, extra="ignore", protected_namespaces=())

_NAME_ADJECTIVES = (
    "amber", "bold", "brisk", "calm", "clever", "cosmic", "crisp", "eager", "gentle", "golden",
    "honest", "jolly", "keen", "lively", "lucid", "mellow", "nimble", "quiet", "rapid", "silver",
    "steady", "sunny", "swift", "tidy", "vivid", "witty",
)  # fmt: skip
_NAME_NOUNS = (
    "badger", "beacon", "canyon", "comet", "falcon", "fjord", "glacier", "harbor", "heron", "lantern",
    "maple", "meadow", "nebula", "orchid", "otter", "pebble", "quartz", "raven", "river", "summit",
    "thistle", "walrus", "willow", "zephyr",
)  # fmt: skip


# Letters and digits of any script, underscore, space, hyphen and apostrophe.
_SAFE_NAME = re.compile(r"[\w '\-]+")


def random_agent_name() -> str:
    """A readable default name such as "SwiftOtter", for agents created without one."""
    return random.choice(_NAME_ADJECTIVES).capitalize() + random.choice(_NAME_NOUNS).capitalize()


def _check_handle(handle: str | None) -> bool:
    """True when `handle` is empty or looks like `provider/model-name`."""
    if not handle:
        return True
    provider, _, model = handle.partition("/")
    return bool(provider and model)


def _check_max_files_open(value: int | None) -> int | None:
    if value is not None and value > MAX_FILES_OPEN_LIMIT:
        raise BadRequestError(f"INVALID_ARGUMENT: max_files_open cannot exceed {MAX_FILES_OPEN_LIMIT}. Got: {value}")
    return value


def _check_timezone(value: str | None) -> str | None:
    # Letta accepted any name and failed with a 500 compiling the prompt for one pytz does not know.
    if value and clock_zone(value) is None:
        raise BadRequestError(
            f"INVALID_ARGUMENT: timezone must be an IANA time zone name, such as America/New_York. Got: {value}"
        )
    return value


def _check_file_window(value: int | None) -> int | None:
    if value is not None and value > MAX_PER_FILE_VIEW_WINDOW_CHAR_LIMIT:
        raise BadRequestError(
            "INVALID_ARGUMENT: per_file_view_window_char_limit cannot exceed "
            f"{MAX_PER_FILE_VIEW_WINDOW_CHAR_LIMIT}. Got: {value}"
        )
    return value


class AgentState(BaseModel):
    """An agent as every agents endpoint returns it, in Letta's field order."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True, protected_namespaces=())

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: str
    name: str
    tool_rules: list[ToolRule] | None = None
    message_ids: list[str] | None = None
    system: str
    agent_type: AgentType
    llm_config: LLMConfig = Field(json_schema_extra=_DEPRECATED)
    embedding_config: EmbeddingConfig | None = Field(default=None, json_schema_extra=_DEPRECATED)
    model: str | None = None
    embedding: str | None = None
    model_settings: ModelSettings | None = None
    compaction_settings: CompactionSettings | None = None
    response_format: ResponseFormat | None = None
    description: str | None = None
    metadata: dict[str, Any] | None = Field(default=None, validation_alias=AliasChoices("metadata_", "metadata"))
    memory: Memory = Field(json_schema_extra=_DEPRECATED)
    blocks: list[Block]
    tools: list[Tool]
    sources: list[Source] = Field(json_schema_extra=_DEPRECATED)
    tags: list[str]
    tool_exec_environment_variables: list[AgentEnvironmentVariable] = Field(
        default_factory=list, json_schema_extra=_DEPRECATED
    )
    secrets: list[AgentEnvironmentVariable] = Field(default_factory=list)
    project_id: str | None = None
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    entity_id: str | None = None
    identity_ids: list[str] = Field(default_factory=list, json_schema_extra=_DEPRECATED)
    identities: list[Identity] = Field(default_factory=list)
    pending_approval: ApprovalRequestMessage | None = None
    message_buffer_autoclear: bool = False
    enable_sleeptime: bool | None = None
    multi_agent_group: Group | None = Field(default=None, json_schema_extra=_DEPRECATED)
    managed_group: Group | None = None
    last_run_completion: datetime | None = None
    last_run_duration_ms: int | None = None
    last_stop_reason: StopReasonType | None = None
    timezone: str | None = None
    max_files_open: int | None = None
    per_file_view_window_char_limit: int | None = None
    hidden: bool | None = None

    @model_validator(mode="after")
    def _file_limits_follow_context_window(self) -> "AgentState":
        # Unset file limits are derived from the model's context window, as Letta does on every read.
        max_files, char_limit = file_defaults_for_context_window(self.llm_config.context_window)
        if self.max_files_open is None:
            self.max_files_open = max_files
        if self.per_file_view_window_char_limit is None:
            self.per_file_view_window_char_limit = char_limit
        return self


class CreateAgent(BaseModel):
    """Body of `POST /v1/agents/` (Letta's `CreateAgentRequest`); unknown fields are ignored, as Letta does."""

    model_config = _REQUEST

    name: str = Field(default_factory=random_agent_name)
    memory_blocks: list[CreateBlock] | None = None
    tools: list[str] | None = None
    tool_ids: list[ToolIdField] | None = None
    source_ids: list[SourceIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    folder_ids: list[SourceIdField] | None = None
    block_ids: list[BlockIdField] | None = None
    tool_rules: list[ToolRule] | None = None
    tags: list[str] | None = None
    system: str | None = None
    agent_type: AgentType = "letta_v1_agent"
    initial_message_sequence: list[MessageCreate] | None = None
    include_base_tools: bool = True
    include_multi_agent_tools: bool = False
    include_base_tool_rules: bool | None = None
    include_default_source: bool = Field(default=False, json_schema_extra=_DEPRECATED)
    description: str | None = None
    metadata: dict[str, Any] | None = None
    llm_config: LLMConfig | None = Field(default=None, json_schema_extra=_DEPRECATED)
    embedding_config: EmbeddingConfig | None = Field(default=None, json_schema_extra=_DEPRECATED)
    model: str | None = None
    embedding: str | None = None
    model_settings: ModelSettings | None = None
    compaction_settings: CompactionSettings | None = None
    context_window_limit: int | None = None
    embedding_chunk_size: int | None = Field(default=300, json_schema_extra=_DEPRECATED)
    max_tokens: int | None = Field(default=None, json_schema_extra=_DEPRECATED)
    max_reasoning_tokens: int | None = Field(default=None, json_schema_extra=_DEPRECATED)
    enable_reasoner: bool | None = Field(default=True, json_schema_extra=_DEPRECATED)
    reasoning: bool | None = Field(default=None, json_schema_extra=_DEPRECATED)
    from_template: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    template: bool = Field(default=False, json_schema_extra=_DEPRECATED)
    project: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    tool_exec_environment_variables: dict[str, str] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    secrets: dict[str, str] | None = None
    memory_variables: dict[str, str] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    project_id: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    template_id: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    base_template_id: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    identity_ids: list[IdentityIdField] | None = None
    message_buffer_autoclear: bool = False
    enable_sleeptime: bool | None = None
    response_format: ResponseFormat | None = Field(default=None, json_schema_extra=_DEPRECATED)
    timezone: str | None = None
    max_files_open: int | None = None
    per_file_view_window_char_limit: int | None = None
    hidden: bool | None = Field(default=None, json_schema_extra=_DEPRECATED)
    parallel_tool_calls: bool | None = Field(default=None, json_schema_extra=_DEPRECATED)

    @field_validator("name")
    @classmethod
    def _name_is_filesystem_safe(cls, name: str) -> str:
        # Agent names become file names on export; Letta refuses the characters a filesystem would.
        if name and not _SAFE_NAME.fullmatch(name):
            raise BadRequestError(
                f"Agent name '{name}' contains invalid characters. Only letters (any language), digits, spaces, "
                "hyphens, underscores, and apostrophes are allowed. Please avoid filesystem-unsafe characters "
                'like: / \\ : * ? " < > |'
            )
        return name

    @field_validator("model")
    @classmethod
    def _model_is_handle(cls, model: str | None) -> str | None:
        if not _check_handle(model):
            raise BadRequestError("INVALID_ARGUMENT: The model handle should be in the format provider/model-name")
        return model

    @field_validator("embedding")
    @classmethod
    def _embedding_is_handle(cls, embedding: str | None) -> str | None:
        if not _check_handle(embedding):
            raise ValueError("The embedding handle should be in the format provider/model-name")
        return embedding

    _max_files = field_validator("max_files_open")(_check_max_files_open)
    _file_window = field_validator("per_file_view_window_char_limit")(_check_file_window)
    _timezone = field_validator("timezone")(_check_timezone)

    @model_validator(mode="after")
    def _voice_agents_need_sleeptime(self) -> "CreateAgent":
        if self.agent_type == "voice_convo_agent" and not self.enable_sleeptime:
            raise ValueError(f"Agent type {self.agent_type} requires enable_sleeptime to be True")
        return self


CreateAgentRequest = CreateAgent


class InternalTemplateAgentCreate(CreateAgent):
    """Body of `POST /v1/_internal_templates/agents`: an agent deployed from a template, stamped with its origin."""

    base_template_id: str  # type: ignore[assignment]
    template_id: str  # type: ignore[assignment]
    deployment_id: str
    entity_id: str


class UpdateAgent(BaseModel):
    """Body of `PATCH /v1/agents/{agent_id}`; apply with `model_dump(exclude_unset=True)`."""

    model_config = _REQUEST

    name: str | None = None
    tool_ids: list[ToolIdField] | None = None
    source_ids: list[SourceIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    folder_ids: list[SourceIdField] | None = None
    block_ids: list[BlockIdField] | None = None
    tags: list[str] | None = None
    system: str | None = None
    tool_rules: list[ToolRule] | None = None
    message_ids: list[MessageIdField] | None = None
    description: str | None = None
    metadata: dict[str, Any] | None = None
    tool_exec_environment_variables: dict[str, str] | None = None
    secrets: dict[str, str] | None = None
    project_id: str | None = None
    template_id: str | None = None
    base_template_id: str | None = None
    identity_ids: list[IdentityIdField] | None = None
    message_buffer_autoclear: bool | None = None
    model: str | None = None
    embedding: str | None = None
    model_settings: ModelSettings | None = None
    compaction_settings: CompactionSettings | None = None
    context_window_limit: int | None = None
    reasoning: bool | None = Field(default=None, json_schema_extra=_DEPRECATED)
    llm_config: LLMConfig | None = Field(default=None, json_schema_extra=_DEPRECATED)
    embedding_config: EmbeddingConfig | None = None
    parallel_tool_calls: bool | None = Field(default=None, json_schema_extra=_DEPRECATED)
    response_format: ResponseFormat | None = Field(default=None, json_schema_extra=_DEPRECATED)
    max_tokens: int | None = Field(default=None, json_schema_extra=_DEPRECATED)
    enable_sleeptime: bool | None = None
    last_run_completion: datetime | None = None
    last_run_duration_ms: int | None = None
    last_stop_reason: StopReasonType | None = None
    timezone: str | None = None
    max_files_open: int | None = None
    per_file_view_window_char_limit: int | None = None
    hidden: bool | None = None

    _max_files = field_validator("max_files_open")(_check_max_files_open)
    _file_window = field_validator("per_file_view_window_char_limit")(_check_file_window)
    _timezone = field_validator("timezone")(_check_timezone)
