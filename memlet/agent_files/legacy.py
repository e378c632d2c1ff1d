"""The legacy (pre-v2) agent file, written by Letta 0.6 to 0.10, and its conversion to a v2 file.

A legacy file is one agent object with everything inline and no ids: `core_memory` blocks, `tools`, `messages`
with `in_context_message_indices` (positions in `messages`, in context order, not always sorted). The conversion
numbers everything (`agent-0`, `block-i`, `tool-i`, `message-j`) and keeps every message, so the imported agent
has its whole stored history with the same in-context list.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_IGNORE = ConfigDict(extra="ignore", populate_by_name=True, protected_namespaces=())


class LegacyBlock(BaseModel):
    model_config = _IGNORE

    label: str
    value: str = ""
    limit: int = Field(default=5000, ge=1)
    description: str | None = None
    is_template: bool = False
    template_name: str | None = None
    metadata_: dict[str, Any] | None = None


class LegacyTool(BaseModel):
    model_config = _IGNORE

    name: str
    tool_type: str = "custom"
    description: str | None = None
    tags: list[str] | None = None
    source_type: str | None = "python"
    source_code: str | None = None
    json_schema: dict[str, Any] | None = None
    args_json_schema: dict[str, Any] | None = None
    return_char_limit: int | None = None
    metadata_: dict[str, Any] | None = None


class LegacyMessage(BaseModel):
    model_config = _IGNORE

    role: str
    content: list[dict[str, Any]] | str | None = None
    text: str | None = None  # early 0.6 releases stored the text here, before `content` parts
    name: str | None = None
    model: str | None = None
    group_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_returns: list[dict[str, Any]] | None = None
    created_at: str | None = None


class LegacyTag(BaseModel):
    model_config = _IGNORE

    tag: str


class LegacyEnvVar(BaseModel):
    model_config = _IGNORE

    key: str
    value: str | None = ""


class LegacyAgentFile(BaseModel):
    """One agent, as `letta/serialize_schemas/pydantic_agent_schema.py` wrote it."""

    model_config = _IGNORE

    name: str
    agent_type: str = "memgpt_agent"
    description: str | None = None
    system: str | None = None
    version: str | None = None
    metadata_: dict[str, Any] | None = None
    message_buffer_autoclear: bool = False
    multi_agent_group: dict[str, Any] | None = None
    llm_config: dict[str, Any]
    embedding_config: dict[str, Any] | None = None
    core_memory: list[LegacyBlock] = Field(default_factory=list)
    tools: list[LegacyTool] = Field(default_factory=list)
    tool_rules: list[dict[str, Any]] | None = None
    tags: list[LegacyTag] = Field(default_factory=list)
    tool_exec_environment_variables: list[LegacyEnvVar] = Field(default_factory=list)
    messages: list[LegacyMessage] = Field(default_factory=list)
    in_context_message_indices: list[int] = Field(default_factory=list)


# Rule `type` values of early 0.6 releases, and what they are called now.
OLD_RULE_TYPES = {
    "InitToolRule": "run_first",
    "TerminalToolRule": "exit_loop",
    "ToolRule": "constrain_child_tools",
    "require_parent_tools": "parent_last_tool",
}


def _rules(rules: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{**r, "type": OLD_RULE_TYPES.get(str(r.get("type")), r.get("type"))} for r in rules or []]


def is_legacy(data: dict[str, Any]) -> bool:
    """A legacy file is a single agent object: it has no `agents` list but agent keys at the top."""
    return "agents" not in data and ("core_memory" in data or "in_context_message_indices" in data)


def clean_tool_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """A legacy tool schema as the v2 loop wants it: no stray top-level `type`/`required`, no `request_heartbeat`
    (added back at request time) and no `agent_state` (injected by the sandbox, never asked of the model)."""
    if schema is None:
        return None
    cleaned = {k: v for k, v in schema.items() if k not in ("type", "required")}
    parameters = dict(cleaned.get("parameters") or {})
    hidden = {"request_heartbeat", "agent_state", "self"}
    if isinstance(parameters.get("properties"), dict):
        parameters["properties"] = {k: v for k, v in parameters["properties"].items() if k not in hidden}
    if isinstance(parameters.get("required"), list):
        parameters["required"] = [r for r in parameters["required"] if r not in hidden]
    if parameters:
        cleaned["parameters"] = parameters
    return cleaned


def _llm_config(config: dict[str, Any]) -> dict[str, Any]:
    filled = dict(config)
    if not filled.get("handle") and filled.get("model"):
        provider = filled.get("provider_name") or filled.get("model_endpoint_type") or "openai"
        filled["handle"] = f"{provider}/{filled['model']}"
    return filled


def _message(j: int, m: LegacyMessage) -> dict[str, Any]:
    returns = [{**r, "tool_call_id": m.tool_call_id} for r in m.tool_returns or []]
    return {
        "id": f"message-{j}",
        "type": "message",
        "role": m.role,
        "content": m.content if m.content is not None else m.text,
        "name": m.name,
        "model": m.model,
        "group_id": m.group_id,
        "agent_id": "agent-0",
        "tool_calls": m.tool_calls or None,
        "tool_call_id": m.tool_call_id,
        "tool_returns": returns,
        "created_at": m.created_at,
    }


def legacy_to_v2(legacy: LegacyAgentFile) -> dict[str, Any]:
    """The v2 `AgentFileSchema` dict for a legacy file (validated by the caller like any v2 file)."""
    if legacy.multi_agent_group:
        raise ValueError("multi_agent_group: multi-agent legacy files are not supported")
    count = len(legacy.messages)
    bad = [i for i in legacy.in_context_message_indices if not 0 <= i < count]
    if bad:
        raise ValueError(f"in_context_message_indices: index {bad[0]} is outside the {count} messages")
    secrets = {v.key: "" for v in legacy.tool_exec_environment_variables}
    blocks = [
        {
            "id": f"block-{i}",
            "label": b.label,
            "value": b.value,
            "limit": max(b.limit, len(b.value)),
            "description": b.description,
            "is_template": b.is_template,
            "template_name": b.template_name,
            "metadata": b.metadata_ or {},
            "read_only": False,
        }
        for i, b in enumerate(legacy.core_memory)
    ]
    tools = [
        {
            "id": f"tool-{i}",
            "name": t.name,
            "tool_type": t.tool_type,
            "description": t.description,
            "tags": t.tags or [],
            "source_type": t.source_type,
            "source_code": t.source_code,
            "json_schema": clean_tool_schema(t.json_schema),
            "args_json_schema": t.args_json_schema,
            "return_char_limit": t.return_char_limit,
            "metadata_": t.metadata_ or {},
        }
        for i, t in enumerate(legacy.tools)
    ]
    agent = {
        "id": "agent-0",
        "name": legacy.name,
        "agent_type": legacy.agent_type,
        "system": legacy.system,
        "description": legacy.description,
        "metadata": legacy.metadata_,
        "message_buffer_autoclear": legacy.message_buffer_autoclear,
        "llm_config": _llm_config(legacy.llm_config),
        "embedding_config": legacy.embedding_config,
        "tool_rules": _rules(legacy.tool_rules),
        "tags": [t.tag for t in legacy.tags],
        "secrets": secrets,
        "tool_ids": [t["id"] for t in tools],
        "block_ids": [b["id"] for b in blocks],
        "messages": [_message(j, m) for j, m in enumerate(legacy.messages)],
        "in_context_message_ids": [f"message-{k}" for k in legacy.in_context_message_indices],
    }
    return {
        "agents": [agent],
        "groups": [],
        "blocks": blocks,
        "files": [],
        "sources": [],
        "tools": tools,
        "mcp_servers": [],
        "metadata": {"converted_from": legacy.version or "legacy"},
    }
