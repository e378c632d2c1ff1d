"""A tool call's arguments as the model sent them: read leniently, as Letta reads them, with the loop's own
`request_heartbeat` flag taken out, and written back onto the stored call."""

import json
from typing import Any

from memlet.db.sql import storable_value
from memlet.llm.chat_format import HEARTBEAT_PARAM
from memlet.llm.types import ToolCall


def parse_args(call: ToolCall) -> dict[str, Any] | None:
    """The call's arguments as a dict, or None when the model sent something that is not a JSON object. Escaped
    NULs and lone surrogates in them are cleaned (`storable_text`): the tool, the stored call and the next request
    could not carry them.

    Lenient as Letta is: of several objects run together (`{...}{...}`, a model trying parallel calls in one) the
    first is taken, and an object encoded twice (a JSON string holding it) is decoded again. (Letta cut the text at
    the first `}{`, even inside a string value; memlet only reads a first object from text that is not JSON.)
    """
    text = call.arguments or "{}"
    try:
        try:
            args = json.loads(text, strict=False)
        except ValueError:
            args, _ = json.JSONDecoder(strict=False).raw_decode(text.lstrip())
        if isinstance(args, str):
            args = json.loads(args, strict=False)
    except ValueError:
        return None
    return storable_value(args) if isinstance(args, dict) else None


def heartbeat_flag(value: Any) -> bool:
    """A `request_heartbeat` argument as a flag: text counts only when it says "true" (any case), as in Letta."""
    return value.lower() == "true" if isinstance(value, str) else bool(value)


def pop_heartbeat(args: dict[str, Any] | None) -> bool:
    """Remove `request_heartbeat` from a call's arguments; whether the model asked for one."""
    return heartbeat_flag(args.pop(HEARTBEAT_PARAM, False)) if args is not None else False


def stored_call(call_id: str, name: str, args: dict[str, Any] | None, raw: str) -> dict[str, Any]:
    """A call as stored on its row: re-serialized arguments, or the model's raw text when it was not JSON."""
    arguments = json.dumps(args, ensure_ascii=False) if args is not None else raw
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
