"""The 422 body of a request that fails validation, in Letta 0.16.8's shape.

``detail`` is the string form of the error list (``type``, ``loc``, ``msg``, ``input`` and, where pydantic gives one,
``ctx``), next to an empty ``trace_id``. A malformed id in the path (a ``<primitive>_id`` parameter Letta validates
by pattern) is told as one pattern mismatch, ``String should match pattern 'agent-{uuid4}'``, whatever its length,
and the body lists an example id of each such primitive under ``examples``.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memlet.ids import id_pattern

# The id prefixes Letta names its path validators by (its PrimitiveType values). A parameter is rewritten when its
# name is one of these plus `_id`: `folder_id` and `conversation_id` are not (their prefixes are `source`, `conv`).
_PRIMITIVES = frozenset(
    {
        "agent", "message", "run", "job", "group", "block", "file", "source", "tool", "archive", "passage", "provider",
        "model", "sandbox", "step", "identity", "conv", "mcp_server", "mcp-oauth", "file_agent", "sandbox-env",
        "agent-env", "user", "org", "tool_rule", "batch_item", "batch_req", "provider_trace",
    }
)  # fmt: skip
_ID_MISMATCHES = frozenset({"string_pattern_mismatch", "string_too_short", "string_too_long"})
_KEYS = ("type", "loc", "msg", "input", "ctx")


def validation_body(errors: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Letta's 422 body for these validation errors (FastAPI's ``RequestValidationError.errors()``)."""
    shown: list[dict[str, Any]] = []
    examples: set[str] = set()
    for error in errors:
        item = {key: error[key] for key in _KEYS if key in error}
        primitive = _path_id_primitive(item)
        if primitive is not None:
            item["msg"] = f"String should match pattern '{primitive}-{{uuid4}}'"
            if item["type"] != "string_pattern_mismatch":
                item["ctx"] = {"pattern": id_pattern(primitive)}
            item["type"] = "string_pattern_mismatch"
            examples.add(f"{primitive}-123e4567-e89b-42d3-8456-426614174000")
        shown.append(item)
    body: dict[str, Any] = {"trace_id": "", "detail": repr(shown)}
    if examples:
        body["examples"] = sorted(examples)
    return body


def _path_id_primitive(error: Mapping[str, Any]) -> str | None:
    loc: Sequence[Any] = error.get("loc") or ()
    if len(loc) != 2 or loc[0] != "path" or error.get("type") not in _ID_MISMATCHES:
        return None
    name = loc[1]
    if not isinstance(name, str) or not name.endswith("_id") or name[:-3] not in _PRIMITIVES:
        return None
    return name[:-3]
