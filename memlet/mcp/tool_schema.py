"""An MCP tool's `inputSchema` made into the `json_schema` memlet stores and sends to the model.

`$ref`s into `$defs`/`definitions` are inlined (models cannot follow references), duplicate `anyOf` members are
merged, and the top level always has `type: object`, `properties` and `required`. Anything else is kept as the
server wrote it. A self-referencing definition is cut at `MAX_DEPTH` into a plain object. The schema's grade for
strict mode (`health`) is stored beside it, under Letta's keys.
"""

import json
from typing import Any

from memlet.llm.tool_definitions import SCHEMA_STATUS_KEY, SCHEMA_WARNINGS_KEY

MAX_DEPTH = 12
MAX_NAME = 48
_DEFS = ("$defs", "definitions")


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in _DEFS:
        value = schema.get(key)
        if isinstance(value, dict):
            found.update({f"#/{key}/{name}": body for name, body in value.items()})
    return found


def _inline(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref in defs:
        if depth >= MAX_DEPTH:
            return {"type": "object"}
        target = _inline(defs[ref], defs, depth + 1)
        extra = {k: _inline(v, defs, depth) for k, v in node.items() if k != "$ref"}
        return {**target, **extra} if isinstance(target, dict) else target
    out = {k: _inline(v, defs, depth) for k, v in node.items() if k not in _DEFS}
    if isinstance(out.get("anyOf"), list):
        unique: list[Any] = []
        seen: set[str] = set()
        for member in out["anyOf"]:
            key = json.dumps(member, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                unique.append(member)
        out["anyOf"] = unique
    return out


def parameters_schema(input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The `parameters` of the stored json_schema for an MCP `inputSchema`."""
    schema = dict(input_schema or {})
    params: dict[str, Any] = _inline(schema, _definitions(schema), 0)
    params.pop("title", None)
    params["type"] = "object"
    if not isinstance(params.get("properties"), dict):
        params["properties"] = {}
    if not isinstance(params.get("required"), list):
        params["required"] = []
    return params


def function_schema(name: str, description: str | None, input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The stored json_schema, with the schema's grade under Letta's keys (`mcp:SCHEMA_STATUS`, `mcp:SCHEMA_WARNINGS`;
    the loop leaves them out of what the model is sent and turns strict mode off for loose schemas)."""
    grade = health(input_schema)
    return {
        "name": name,
        "description": description or "",
        "parameters": parameters_schema(input_schema),
        SCHEMA_STATUS_KEY: grade["status"],
        SCHEMA_WARNINGS_KEY: grade["reasons"],
    }


class _Grader:
    """Letta's three grades of a tool schema for OpenAI's strict mode: STRICT_COMPLIANT; NON_STRICT_ONLY (valid,
    but an object takes keys it does not declare); INVALID (broken: an argument without a type, an array without
    `items`, a required name that is not a property, a top level that is not an object).

    Unlike Letta, memlet does not close objects that leave `additionalProperties` unset: one with declared
    properties is graded as closed (strict mode closes it), one without is free-form, so NON_STRICT_ONLY.
    """

    def __init__(self) -> None:
        self.invalid: list[str] = []
        self.loose: list[str] = []

    def node(self, node: Any, path: str, root: bool = False) -> None:
        if not isinstance(node, dict):
            self.invalid.append(f"{path}: not a schema object")
            return
        kind = node.get("type")
        if kind is None:
            if "properties" in node or "additionalProperties" in node:
                kind = "object"
            elif "items" in node:
                kind = "array"
            elif not any(key in node for key in _UNIONS):
                self.invalid.append(f"{path}: no 'type'")
                return
        if isinstance(kind, list):
            self.invalid += [f"{path}: unknown type {k!r} in its type list" for k in kind if k not in _TYPES]
        elif kind == "object":
            self._object(node, path, root)
        elif kind == "array":
            items = node.get("items")
            if isinstance(items, dict):
                self.node(items, f"{path}.items")
            else:
                self.invalid.append(f"{path}: an array without an 'items' schema")
        for key in _UNIONS:
            members = node.get(key)
            if members is None:
                continue
            if not isinstance(members, list):
                self.invalid.append(f"{path}: '{key}' is not a list")
                continue
            for index, member in enumerate(members):
                self.node(member, f"{path}.{key}[{index}]")

    def _object(self, node: dict[str, Any], path: str, root: bool) -> None:
        props = node.get("properties")
        if props is not None and not isinstance(props, dict):
            self.invalid.append(f"{path}: 'properties' is not an object")
            return
        extra = node.get("additionalProperties")
        if not props and extra is not False and not root:  # the top level is always closed in strict mode
            self.loose.append(f"{path}: free-form object (no declared properties, additionalProperties not false)")
        elif extra not in (None, False):
            self.loose.append(f"{path}: additionalProperties is not false (it takes undeclared keys)")
        required = node.get("required", [])
        if not isinstance(required, list):
            self.invalid.append(f"{path}: 'required' is not a list")
            required = []
        for name in required:
            if props and name not in props:
                self.invalid.append(f"{path}: required '{name}' is not among its properties")
        for name, prop in (props or {}).items():
            self.node(prop, f"{path}.properties.{name}")


_UNIONS = ("anyOf", "oneOf", "allOf")
_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "array", "object"})


def health(input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """Letta's `MCPToolHealth` of an MCP `inputSchema`: `{"status": ..., "reasons": [...]}`."""
    grader = _Grader()
    top = (input_schema or {}).get("type")
    if top is not None and top != "object":
        grader.invalid.append(f"root: the top level is {top!r}, not 'object'")
    grader.node(parameters_schema(input_schema), "root", root=True)
    if grader.invalid:
        return {"status": "INVALID", "reasons": grader.invalid + grader.loose}
    if grader.loose:
        return {"status": "NON_STRICT_ONLY", "reasons": grader.loose}
    return {"status": "STRICT_COMPLIANT", "reasons": []}
