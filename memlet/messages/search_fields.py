"""What message search shows of a stored message, and which messages it may show at all."""

import contextlib
import json
from typing import Any

from memlet.db import models as orm

# Tool returns that are never search results (as in Letta's search index).
_UNSEARCHABLE_RETURNS = frozenset({"send_message", "conversation_search"})


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.strip().startswith("{"):
        return None
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    return None


def search_result_fields(row: orm.Message) -> dict[str, Any]:
    """What a search hit shows of its message, shaped as Letta shapes it.

    Text that is itself a JSON object (system alerts, summaries) is merged in rather than nested; heartbeats show
    nothing; a V2 `send_message` call shows its message as `content` and the inner thoughts as `thinking`.
    """
    text = " ".join(
        str(p.get("text") or p.get("reasoning") or "") for p in row.content or [] if p.get("text") or p.get("reasoning")
    )
    packed = _json_object(text)
    if packed is not None and packed.get("type") == "heartbeat":
        return {}
    for call in row.tool_calls or []:
        function = call.get("function") or {}
        if function.get("name") == "send_message":
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(function.get("arguments") or "{}").get("message", "")
                return {"thinking": text, "content": message}
    if not text:
        return {}
    return packed if packed is not None else {"content": text}


def searchable_fields(row: orm.Message) -> dict[str, Any] | None:
    """What the search index would hold for a row (as a dict to encode), or None if it holds nothing."""
    if row.role == "tool" and row.name in _UNSEARCHABLE_RETURNS:
        return None
    fields = search_result_fields(row)
    return fields or None
