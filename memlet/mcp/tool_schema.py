"""An MCP tool's `inputSchema` made into the `json_schema` memlet stores and sends to the model.

`$ref`s into `$defs`/`definitions` are inlined (models cannot follow references), duplicate `anyOf` members are
merged, and the top level always has `type: object`, `properties` and `required`. Anything else is kept as the
server wrote it. A self-referencing definition is cut at `MAX_DEPTH` into a plain object.
"""

import json
from typing import Any

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
    return {"name": name, "description": description or "", "parameters": parameters_schema(input_schema)}


def _free_objects(node: Any) -> bool:
    """Whether the schema has an object with no declared properties (strict mode cannot describe it)."""
    if isinstance(node, list):
        return any(_free_objects(item) for item in node)
    if not isinstance(node, dict):
        return False
    if node.get("type") == "object" and not node.get("properties"):
        return True
    return any(_free_objects(v) for k, v in node.items() if k != "properties") or any(
        _free_objects(v) for v in (node.get("properties") or {}).values()
    )


def health(input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """Letta's `MCPToolHealth`: STRICT_COMPLIANT, or NON_STRICT_ONLY when a free-form object is present."""
    params = parameters_schema(input_schema)
    if any(_free_objects(p) for p in params["properties"].values()):
        return {"status": "NON_STRICT_ONLY", "reasons": ["an object without declared properties"]}
    return {"status": "STRICT_COMPLIANT", "reasons": []}
