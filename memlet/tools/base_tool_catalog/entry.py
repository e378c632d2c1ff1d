"""What every built-in tool entry is made of: the tool types, `ToolEntry`, and the JSON-schema helpers."""

from collections.abc import Sequence
from typing import Any, NamedTuple

LETTA_CORE = "letta_core"
LETTA_MEMORY_CORE = "letta_memory_core"
LETTA_SLEEPTIME_CORE = "letta_sleeptime_core"
LETTA_MULTI_AGENT_CORE = "letta_multi_agent_core"
LETTA_VOICE_SLEEPTIME_CORE = "letta_voice_sleeptime_core"
LETTA_BUILTIN = "letta_builtin"
LETTA_FILES_CORE = "letta_files_core"


class ToolEntry(NamedTuple):
    """One built-in tool; ``properties`` and ``required`` become its JSON schema's ``parameters``."""

    name: str
    tool_type: str
    description: str
    properties: dict[str, Any] | None = None
    required: Sequence[str] = ()
    parallel: bool = False


def string_param(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def integer_param(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}


def strings_param(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def enum_param(values: list[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": values, "description": description}


LABEL = "Label of the memory block to edit."
NO_LINE_NUMBERS = "Leave out the line-number prefixes shown in the memory view."
ANOTHER_AGENT = "ID of the Letta agent that should receive the message."
