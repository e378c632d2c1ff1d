"""What an executed tool's return becomes before anything else reads it, as Letta's tool execution manager leaves
it (shared by the agent loop and the run endpoints)."""

import json
from typing import Any

# Letta's default `return_char_limit` of a tool (FUNCTION_RETURN_CHAR_LIMIT).
DEFAULT_RETURN_CHAR_LIMIT = 50000


def noted_over_limit(value: Any, limit: int | None) -> Any:
    """Letta's first pass over every executed tool's return: one whose text (a dict: its compact JSON) passes the
    tool's limit becomes that whole text with a note, not yet cut (`returned_message` cuts it for the model, so the
    count it shows includes this note; `POST /v1/agents/{id}/tools/{name}/run` answers it as it is)."""
    if not limit:
        return value
    text = json.dumps(value, default=str) if isinstance(value, dict) else str(value)
    if len(text) <= limit:
        return value
    return (
        f"{text}... [NOTE: function output was truncated since it exceeded the character limit: {len(text)} > {limit}]"
    )
