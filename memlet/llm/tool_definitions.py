"""The tools of an LLM request in OpenAI's format: a stored json_schema as the model gets it (V2 agents' `thinking`
and `request_heartbeat`, strict mode where the schema allows it, a response_format's `message`)."""

import copy
from collections.abc import Mapping
from typing import Any

import orjson

from memlet.llm.chat_format import HEARTBEAT_PARAM, THINKING_PARAM
from memlet.llm.model_quirks import strict_schema

_THINKING_SCHEMA = {"type": "string", "description": "Deep inner monologue private to you only."}
# Letta's grade of a discovered MCP tool's schema, kept in its json_schema and never sent to the model. A tool
# graded NON_STRICT_ONLY (a free-form object) or INVALID (e.g. an argument without a type) is sent without strict
# mode, which would make the provider refuse the whole request.
SCHEMA_STATUS_KEY = "mcp:SCHEMA_STATUS"
SCHEMA_WARNINGS_KEY = "mcp:SCHEMA_WARNINGS"
NOT_STRICT_GRADES = frozenset({"NON_STRICT_ONLY", "INVALID"})
_HEARTBEAT_SCHEMA = {
    "type": "boolean",
    "description": "Request an immediate heartbeat after function execution. "
    "Set to `true` if you want to chain another function call after this one.",
}


def json_copy(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON data (a stored schema), through orjson: several times faster than ``copy.deepcopy``."""
    try:
        copied: dict[str, Any] = orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError:  # not plain JSON after all (e.g. an integer beyond 64 bits)
        return copy.deepcopy(value)
    return copied


def message_schema(response_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What `send_message`'s `message` takes under an agent's response_format (None: its own string), as Letta's
    `runtime_override_tool_json_schema` sets it for every agent type: a json_schema format's schema, or any object."""
    kind = (response_format or {}).get("type")
    if kind == "json_schema":
        schema = ((response_format or {}).get("json_schema") or {}).get("schema")
        return json_copy(schema) if isinstance(schema, dict) else None
    if kind == "json_object":
        return {
            "type": "object",
            "description": "Message contents. All unicode (including emojis) are supported.",
            "additionalProperties": True,
            "properties": {},
        }
    return None


def tool_definition(
    schema: dict[str, Any],
    *,
    v2: bool,
    terminal: bool,
    thinking: bool = True,
    strict: bool = False,
    message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An OpenAI tool object for a stored json_schema.

    V2 agents get `request_heartbeat` (non-terminal tools) and, when the model is asked for its thoughts as an
    argument (`thinking`), `thinking` first. `strict` puts the schema in strict mode (structured outputs), unless
    the stored grade of an MCP tool's schema rules it out. `message` replaces the schema of a `message` parameter,
    after strict mode (`message_schema`). The grade is left out, and so is a stored `request_heartbeat` for other
    agents.
    """
    strict = strict and schema.get(SCHEMA_STATUS_KEY) not in NOT_STRICT_GRADES
    function = strict_schema(schema) if strict else json_copy(schema)
    function.pop(SCHEMA_STATUS_KEY, None)
    function.pop(SCHEMA_WARNINGS_KEY, None)
    if message is not None:
        params = function.setdefault("parameters", {"type": "object", "properties": {}})
        params["properties"] = {**params.get("properties", {}), "message": message}
    if v2:
        params = function.setdefault("parameters", {"type": "object", "properties": {}})
        properties = dict(params.get("properties", {}))
        required = [r for r in params.get("required", []) if r != THINKING_PARAM]
        if thinking:
            properties = {THINKING_PARAM: _THINKING_SCHEMA, **properties}
            required = [THINKING_PARAM, *required]
        if not terminal:
            properties[HEARTBEAT_PARAM] = _HEARTBEAT_SCHEMA
            if HEARTBEAT_PARAM not in required:  # Letta stores it in an MCP tool's schema
                required.append(HEARTBEAT_PARAM)
        params["properties"], params["required"] = properties, required
    elif isinstance(params := function.get("parameters"), dict):
        _drop_heartbeat(params)
    return {"type": "function", "function": function}


def _drop_heartbeat(params: dict[str, Any]) -> None:
    """Take a stored `request_heartbeat` out of a letta_v1 agent's tool (Letta's MCP tool schemas carry one, and
    its clients remove it for these agents)."""
    properties = params.get("properties")
    if isinstance(properties, dict) and HEARTBEAT_PARAM in properties:
        params["properties"] = {k: v for k, v in properties.items() if k != HEARTBEAT_PARAM}
    required = params.get("required")
    if isinstance(required, list) and HEARTBEAT_PARAM in required:
        params["required"] = [r for r in required if r != HEARTBEAT_PARAM]
