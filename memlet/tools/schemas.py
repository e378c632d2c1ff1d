"""Wire models for tools (Letta 0.16.8 names, defaults and nulls).

The tool metadata field is literally named `metadata_` on the wire, in responses and in `ToolUpdate` alike.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memlet.ids import Prefix, new_id

FUNCTION_RETURN_CHAR_LIMIT = 50_000

ToolType = Literal[
    "custom",
    "letta_core",
    "letta_memory_core",
    "letta_multi_agent_core",
    "letta_sleeptime_core",
    "letta_voice_sleeptime_core",
    "letta_builtin",
    "letta_files_core",
    "external_langchain",
    "external_composio",
    "external_mcp",
]

_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)


class PipRequirement(BaseModel):
    """A pip package a tool needs in its sandbox."""

    name: str = Field(min_length=1)
    version: str | None = None


class NpmRequirement(BaseModel):
    """An npm package a (TypeScript) tool needs in its sandbox."""

    name: str = Field(min_length=1)
    version: str | None = None


def _new_tool_id() -> str:
    return new_id(Prefix.TOOL)


class Tool(BaseModel):
    """A tool as returned by `/v1/tools` and inside `AgentState.tools`."""

    model_config = _RESPONSE

    id: str = Field(default_factory=_new_tool_id)
    tool_type: ToolType = "custom"
    description: str | None = None
    source_type: str | None = None
    name: str | None = None
    tags: list[str] = Field(default_factory=list)
    source_code: str | None = None
    json_schema: dict[str, Any] | None = None
    args_json_schema: dict[str, Any] | None = None
    return_char_limit: int = Field(default=FUNCTION_RETURN_CHAR_LIMIT, ge=1, le=1_000_000)
    pip_requirements: list[PipRequirement] | None = None
    npm_requirements: list[NpmRequirement] | None = None
    default_requires_approval: bool | None = None
    enable_parallel_execution: bool | None = False
    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    metadata_: dict[str, Any] | None = Field(default_factory=dict)
    project_id: str | None = None


class ToolCreate(BaseModel):
    """Body of `POST /v1/tools/` and `PUT /v1/tools/` (upsert)."""

    model_config = _REQUEST

    description: str | None = None
    tags: list[str] | None = None
    source_code: str
    source_type: str = "python"
    json_schema: dict[str, Any] | None = None
    args_json_schema: dict[str, Any] | None = None
    return_char_limit: int = Field(default=FUNCTION_RETURN_CHAR_LIMIT, ge=1, le=1_000_000)
    pip_requirements: list[PipRequirement] | None = None
    npm_requirements: list[NpmRequirement] | None = None
    default_requires_approval: bool | None = None
    enable_parallel_execution: bool | None = False

    @model_validator(mode="after")
    def _typescript_needs_schema(self) -> "ToolCreate":
        # A schema can be derived from a Python docstring, never from TypeScript source.
        if self.source_type == "typescript" and not self.json_schema:
            raise ValueError(
                "TypeScript tools require an explicit json_schema parameter. "
                "Unlike Python tools, schema cannot be auto-generated from TypeScript source code."
            )
        return self


class ToolUpdate(BaseModel):
    """Body of `PATCH /v1/tools/{tool_id}`; apply with `model_dump(exclude_unset=True)`."""

    model_config = _REQUEST

    description: str | None = None
    tags: list[str] | None = None
    source_code: str | None = None
    source_type: str | None = None
    json_schema: dict[str, Any] | None = None
    args_json_schema: dict[str, Any] | None = None
    return_char_limit: int | None = Field(default=None, ge=1, le=1_000_000)
    pip_requirements: list[PipRequirement] | None = None
    npm_requirements: list[NpmRequirement] | None = None
    metadata_: dict[str, Any] | None = None
    default_requires_approval: bool | None = None
    enable_parallel_execution: bool | None = False


class ToolRunFromSource(BaseModel):
    """Body of `POST /v1/tools/run`: run source code once without saving a tool."""

    model_config = _REQUEST

    source_code: str
    args: dict[str, Any]
    env_vars: dict[str, str] | None = None
    name: str | None = None
    source_type: str | None = None
    args_json_schema: dict[str, Any] | None = None
    json_schema: dict[str, Any] | None = None
    pip_requirements: list[PipRequirement] | None = None
    npm_requirements: list[NpmRequirement] | None = None


class ToolSearchRequest(BaseModel):
    """Body of `POST /v1/tools/search`. Every `search_mode` runs the same text search here (see `ToolService.search`)."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(None, description="Text query for semantic search.")
    search_mode: Literal["vector", "fts", "hybrid"] = Field(
        "hybrid", description="Search mode: vector, fts, or hybrid."
    )
    tool_types: list[str] | None = Field(None, description="Filter by tool types (e.g., 'custom', 'letta_core').")
    tags: list[str] | None = Field(None, description="Filter by tags (match any).")
    limit: int = Field(50, ge=1, le=100, description="Maximum number of results to return.")


class ToolSearchResult(BaseModel):
    """One tool found by `POST /v1/tools/search`, with its rank and score."""

    model_config = ConfigDict(extra="forbid")

    tool: Tool = Field(..., description="The matched tool.")
    embedded_text: str | None = Field(None, description="The embedded text content used for matching.")
    fts_rank: int | None = Field(None, description="Full-text search rank position.")
    vector_rank: int | None = Field(None, description="Vector search rank position.")
    combined_score: float = Field(..., description="Combined relevance score (RRF for hybrid mode).")
