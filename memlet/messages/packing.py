"""The small JSON documents Letta stores as message text, which the LLM reads verbatim, and their unpacking.

Tool results are ``{"status","message","time"}``; heartbeats, login events, legacy user messages and system
alerts are ``{"type", ..., "time"}``. Key order, indentation and the clock format match Letta 0.16.8 so a
prompt built by memlet reads the same as Letta's.
"""

import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from memlet.messages.content import ImageContent, TextContent, tool_return_to_text
from memlet.messages.schemas import CompactionStats

Status = Literal["success", "error"]


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def clock_zone(timezone: str | None) -> ZoneInfo | None:
    """The zone an agent's `timezone` names for the clock the model reads, looked up as Letta's (pytz) looks it up:
    an IANA name in any letter case (`america/new_york`, `utc`). None for no name or one no zone has."""
    if not timezone:
        return None
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        name = _zone_names().get(timezone.lower())
        return ZoneInfo(name) if name else None


def format_local_time(timezone: str | None = "UTC", now: datetime | None = None) -> str:
    """``2026-11-22 03:03:32 AM UTC+0000``: the clock format of packed messages and the memory metadata.

    No timezone is the server's own, as in Letta; a name no zone has is UTC (Letta's request failed).
    """
    now = now or datetime.now(UTC)
    zone = clock_zone(timezone)
    local = now.astimezone(zone or UTC) if timezone else now.astimezone()
    return local.strftime("%Y-%m-%d %I:%M:%S %p %Z%z").strip()


def dumps_indented(data: dict[str, Any]) -> str:
    # Indented, non-ASCII kept, NUL removed (Postgres text rejects it): the exact bytes the LLM saw in Letta.
    return json.dumps(_strip_nul(data), indent=2, ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"Type {type(value)} not serializable")


def _strip_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strip_nul(v) for v in value]
    return value


def pack_tool_return(success: bool, message: Any, *, timezone: str | None = "UTC", now: datetime | None = None) -> str:
    """The stored tool result ``{"status": "OK"|"Failed", "message": ..., "time": ...}``."""
    status = "OK" if success else "Failed"
    return dumps_indented({"status": status, "message": message, "time": format_local_time(timezone, now)})


def pack_heartbeat(reason: str, *, timezone: str | None = "UTC", now: datetime | None = None) -> str:
    """A heartbeat user message asking the model to continue (V2 loops)."""
    return dumps_indented({"type": "heartbeat", "reason": reason, "time": format_local_time(timezone, now)})


def pack_login_event(
    last_login: str = "Never (first login)", *, timezone: str | None = "UTC", now: datetime | None = None
) -> str:
    """The login event user message of a V2 agent's initial sequence."""
    return dumps_indented({"type": "login", "last_login": last_login, "time": format_local_time(timezone, now)})


def pack_user_message(
    text: str, *, timezone: str | None = "UTC", name: str | None = None, now: datetime | None = None
) -> str:
    """Legacy wrapped user text ``{"type": "user_message", "message": ..., "time": ...}``."""
    packed: dict[str, Any] = {"type": "user_message", "message": text, "time": format_local_time(timezone, now)}
    if name:
        packed["name"] = name
    return dumps_indented(packed)


def pack_system_alert(message: str, *, timezone: str | None = "UTC", now: datetime | None = None) -> str:
    """A system alert (compact JSON, unlike the others); an already packed alert is returned unchanged."""
    try:
        existing = json.loads(message)
    except ValueError:
        existing = None
    if isinstance(existing, dict) and existing.get("type") == "system_alert":
        return message
    return json.dumps({"type": "system_alert", "message": message, "time": format_local_time(timezone, now)})


def unpack_user_message(text: str) -> str:
    """The inner text of a packed ``user_message``; anything else (heartbeat, login, alert, plain) unchanged."""
    try:
        packed = json.loads(text)
    except ValueError:
        return text
    if not isinstance(packed, dict) or "message" not in packed or packed.get("type") != "user_message":
        return text
    inner = packed["message"]
    return inner if isinstance(inner, str) else text


def parse_tool_return(packed: str | list[TextContent | ImageContent] | None) -> tuple[str, Status]:
    """The inner ``message`` and status of a stored tool result (multi-modal output flattened to text)."""
    if isinstance(packed, list):
        return tool_return_to_text(packed) or "[Multi-modal content]", "success"
    if packed is None:
        return "", "success"
    try:
        data = json.loads(packed, strict=False)
    except ValueError:
        return packed, "success"
    if not isinstance(data, dict):
        return packed, "success"
    # str() on purpose: a dict result shows as its Python repr, and a null one as "None", as in Letta.
    return str(data.get("message", packed)), "error" if data.get("status") == "Failed" else "success"


def extract_compaction_stats(packed: str) -> CompactionStats | None:
    """``compaction_stats`` carried inside a packed summary message, if present and well formed."""
    try:
        data = json.loads(packed)
        if isinstance(data, dict) and "compaction_stats" in data:
            return CompactionStats.model_validate(data["compaction_stats"])
    except (ValueError, TypeError):
        return None
    return None
