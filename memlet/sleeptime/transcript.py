"""The input of a sleeptime run: a main agent's messages as plain transcript lines. Pure, no I/O.

Each stored message becomes zero or more lines: ``user: ...``, ``assistant: ...``, ``assistant: <thinking>...``,
``assistant: Calling tool X`` (a ``send_message`` call shows its message instead), ``assistant: Tool call returned
...`` and ``[User approved|rejected: reason]``. System messages and empty tool results are left out.
"""

import json
from collections.abc import Iterable
from typing import Any, Protocol

# Main agents on the letta_v1 loop get the preamble; the classic (memgpt-style) types get the bare transcript.
PREAMBLE_AGENT_TYPES = frozenset({"letta_v1_agent", "sleeptime_agent"})

PREAMBLE = """\
<system-reminder>
You are working in the background, after the fact. You are NOT the agent that talked to the user: another agent \
(the primary agent) had the conversation below, and you are reading it afterwards.
- Lines starting with "assistant" were written by the primary agent, not by you.
- Lines starting with "user" were written by the primary agent's user.
Your job is the memory you share with the primary agent. Read the conversation and use your memory tools to keep \
the memory blocks up to date with whatever is worth remembering; finish when nothing is left to change. Your \
memory_persona block may hold further instructions: follow them.
</system-reminder>

"""


class StoredMessage(Protocol):
    """The fields of a stored message (`memlet.db.models.Message`) the transcript reads."""

    role: str
    name: str | None
    content: list[dict[str, Any]] | None
    tool_calls: list[dict[str, Any]] | None
    approve: bool | None
    denial_reason: str | None


def _call_lines(speaker: str, calls: Iterable[dict[str, Any]]) -> list[str]:
    lines = []
    for call in calls:
        function = call.get("function") or {}
        name = function.get("name")
        if name == "send_message":
            try:
                lines.append(f"{speaker}: {json.loads(function.get('arguments') or '{}')['message']}")
                continue
            except (ValueError, KeyError, TypeError):
                pass
        lines.append(f"{speaker}: Calling tool {name}")
    return lines


def _content_lines(speaker: str, content: Iterable[dict[str, Any]]) -> list[str]:
    lines = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            lines.append(f"{speaker}: {part.get('text', '')}")
        elif kind == "reasoning":
            lines.append(f"{speaker}: <thinking>{part.get('reasoning', '')}</thinking>")
        elif kind == "image":
            lines.append(f"{speaker}: [Image Here]")
    return lines


def _tool_result(content: list[dict[str, Any]]) -> str | None:
    text = next((p.get("text") for p in content if p.get("type") == "text"), None)
    if text is None:
        return None
    try:
        packed = json.loads(text)
    except ValueError:
        return text
    message = packed.get("message") if isinstance(packed, dict) else packed
    return None if message is None or str(message) == "None" else str(message)


def message_lines(message: StoredMessage) -> list[str]:
    """The transcript lines of one stored message (none for system messages)."""
    content = message.content or []
    if message.role == "system":
        return []
    if message.role == "tool":
        result = _tool_result(content)
        return [] if result is None else [f"assistant: Tool call returned {result}"]
    if message.role in ("assistant", "approval") and (message.tool_calls or message.role == "assistant"):
        return _content_lines("assistant", content) + _call_lines("assistant", message.tool_calls or [])
    if message.role == "approval":
        if message.approve is None:
            return []
        reason = f": {message.denial_reason}" if message.denial_reason else ""
        return [f"[User {'approved' if message.approve else 'rejected'}{reason}]"]
    speaker = message.name or "user"
    if message.role != "user":
        content = content[:1]
    return _content_lines(speaker, content)


def transcript(messages: Iterable[StoredMessage]) -> str:
    """The messages as transcript lines, oldest first."""
    return "\n".join(line for m in messages for line in message_lines(m))


def sleeptime_input(agent_type: str, messages: Iterable[StoredMessage]) -> str:
    """The one user message a sleeptime run gets for a main agent of `agent_type`."""
    text = transcript(messages)
    if agent_type in PREAMBLE_AGENT_TYPES:
        return f"{PREAMBLE}Messages:\n{text}"
    return text
