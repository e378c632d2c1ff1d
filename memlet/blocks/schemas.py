"""Wire models for memory blocks and the agent's `Memory` object (Letta 0.16.8 names, defaults and nulls).

`BlockUpdate` carries Letta's non-null defaults (`is_template`, `read_only`, `metadata`...), so a PATCH must be
applied with `model_dump(exclude_unset=True)`: only what the client sent changes.
"""

from datetime import datetime
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from memlet.ids import Prefix, new_id

CORE_MEMORY_BLOCK_CHAR_LIMIT = 100_000

_DEPRECATED: dict[str, Any] = {"deprecated": True}
_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)
# The ORM attribute is `metadata_` (SQLAlchemy reserves `metadata`); the wire name is `metadata`.
_METADATA_ALIAS = AliasChoices("metadata_", "metadata")


def _strip_null_bytes(value: Any) -> Any:
    # Postgres text cannot hold NUL; Letta drops them silently instead of failing the write.
    return value.replace("\x00", "") if isinstance(value, str) else value


def _new_block_id() -> str:
    return new_id(Prefix.BLOCK)


class Block(BaseModel):
    """A labelled section of the agent's context window."""

    model_config = _RESPONSE

    value: str
    limit: int = CORE_MEMORY_BLOCK_CHAR_LIMIT
    project_id: str | None = None
    template_name: str | None = None
    is_template: bool = False
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    entity_id: str | None = None
    preserve_on_migration: bool | None = False
    label: str | None = None
    read_only: bool = False
    description: str | None = None
    metadata: dict[str, Any] | None = Field(default_factory=dict, validation_alias=_METADATA_ALIAS)
    hidden: bool | None = None
    id: str = Field(default_factory=_new_block_id)
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    tags: list[str] | None = Field(default_factory=list)

    _clean_value = field_validator("value", mode="before")(_strip_null_bytes)

    @field_validator("created_by_id", "last_updated_by_id", mode="before")
    @classmethod
    def _never_shown(cls, value: Any) -> None:
        # Letta 0.16.8 stores who created and last edited a block but always answers null for both (its block
        # view reads neither); memlet keeps the columns and shows the same nulls.
        return None

    @field_validator("tags", mode="before")
    @classmethod
    def _null_tags_are_empty(cls, value: list[str] | None) -> list[str]:
        return [] if value is None else value


class FileBlock(Block):
    """The in-context view of an attached file (`blocks/file_blocks.py` builds them)."""

    file_id: str
    source_id: str = Field(json_schema_extra=_DEPRECATED)
    is_open: bool
    last_accessed_at: datetime | None = None


class CreateBlock(BaseModel):
    """A block to create, standalone (`POST /v1/blocks/`) or inside `CreateAgent.memory_blocks`."""

    model_config = _REQUEST

    value: str
    limit: int = CORE_MEMORY_BLOCK_CHAR_LIMIT
    project_id: str | None = None
    template_name: str | None = None
    is_template: bool = False
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    entity_id: str | None = None
    preserve_on_migration: bool | None = False
    label: str
    read_only: bool = False
    description: str | None = None
    metadata: dict[str, Any] | None = Field(default_factory=dict)
    hidden: bool | None = None
    tags: list[str] | None = None

    _clean_value = field_validator("value", mode="before")(_strip_null_bytes)

    @model_validator(mode="before")
    @classmethod
    def _null_value_is_empty(cls, data: Any) -> Any:
        # Letta accepts `"value": null` on create and stores an empty block.
        if isinstance(data, dict) and data.get("value") is None:
            return {**data, "value": ""}
        return data


class BlockUpdate(BaseModel):
    """A partial block update; apply with `model_dump(exclude_unset=True)`."""

    model_config = _REQUEST

    value: str | None = None
    limit: int | None = None
    project_id: str | None = None
    template_name: str | None = None
    is_template: bool = False
    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
    entity_id: str | None = None
    preserve_on_migration: bool | None = False
    label: str | None = None
    read_only: bool = False
    description: str | None = None
    metadata: dict[str, Any] | None = Field(default_factory=dict)
    hidden: bool | None = None
    tags: list[str] | None = None

    _clean_value = field_validator("value", mode="before")(_strip_null_bytes)


class Memory(BaseModel):
    """The agent's in-context memory, as the deprecated `AgentState.memory` and `GET .../core-memory` return it."""

    model_config = _RESPONSE

    agent_type: str | None = None
    git_enabled: bool = False
    blocks: list[Block]
    file_blocks: list[FileBlock] = Field(default_factory=list)
    prompt_template: str = ""

    @field_validator("file_blocks")
    @classmethod
    def _first_file_block_per_label(cls, blocks: list[FileBlock]) -> list[FileBlock]:
        # Letta keeps the first file block of each label and drops later duplicates.
        seen: set[str | None] = set()
        unique = []
        for block in blocks:
            if block.label not in seen:
                seen.add(block.label)
                unique.append(block)
        return unique
