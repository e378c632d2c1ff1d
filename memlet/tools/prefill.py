"""Arguments that tool rules fix for a call (`run_first.args`, `child_arg_nodes`), checked against the tool's schema.

A rule may name an argument the tool does not have, or give a value of the wrong type; Letta then refuses the
call (`invalid_tool_call`) instead of running the tool with it. The check is the basic part of JSON Schema a
function schema uses: `type`, `enum`, `const`, `anyOf` / `oneOf`.
"""

from typing import Any


class PrefillError(ValueError):
    """The rules' arguments do not fit the tool's schema; the message lists every problem."""


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "null":
        return value is None
    if kind in ("integer", "number") and isinstance(value, bool):
        return False  # JSON booleans are not numbers
    allowed = _TYPES.get(kind)
    return allowed is None or isinstance(value, allowed)


def accepts(schema: Any, value: Any) -> bool:
    """Whether `value` satisfies a property schema (unknown keywords accept anything)."""
    if not isinstance(schema, dict):
        return True
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    for key in ("anyOf", "oneOf"):
        if key in schema and not any(accepts(option, value) for option in schema[key]):
            return False
    kind = schema.get("type")
    if isinstance(kind, str):
        return _type_ok(kind, value)
    if isinstance(kind, list):
        return any(_type_ok(str(k), value) for k in kind)
    return True


def merge_prefilled(
    tool_name: str, schema: dict[str, Any] | None, args: dict[str, Any], prefilled: dict[str, Any]
) -> dict[str, Any]:
    """The model's arguments with the rules' values laid over them; raises PrefillError when they do not fit."""
    if not prefilled:
        return args
    params = (schema or {}).get("parameters") or {}
    properties = params.get("properties") or {} if isinstance(params, dict) else {}
    problems = []
    for key, value in prefilled.items():
        if key not in properties:
            problems.append(f"{tool_name} has no argument '{key}'.")
        elif not accepts(properties[key], value):
            expected = properties[key].get("type") if isinstance(properties[key], dict) else None
            problems.append(f"'{key}' = {value!r} is not what the schema asks for (type {expected!r}).")
    if problems:
        raise PrefillError("; ".join(problems))
    return {**args, **prefilled}
