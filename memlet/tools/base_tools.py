"""Letta's built-in tools: which tools each agent type gets, their stored Tool fields, and the default tool rules.

The catalogue itself (names, tool types, JSON schemas, descriptions) is data in ``memlet.tools.base_tool_catalog``.
Base tools are stored with `source_code: null`, `tags: [tool_type]`, `source_type: "python"`; their behaviour
lives in `memlet.tool_exec`.
"""

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memlet.tools.base_tool_catalog import (
    BASE_TOOL_CATALOG,
    LETTA_BUILTIN,
    LETTA_CORE,
    LETTA_FILES_CORE,
    LETTA_MEMORY_CORE,
    LETTA_MULTI_AGENT_CORE,
    LETTA_SLEEPTIME_CORE,
    LETTA_VOICE_SLEEPTIME_CORE,
    ToolEntry,
)

__all__ = [
    "BASE_FUNCTION_RETURN_CHAR_LIMIT",
    "BASE_TOOLS",
    "FILE_TOOL_NAMES",
    "LETTA_BUILTIN",
    "LETTA_CORE",
    "LETTA_FILES_CORE",
    "LETTA_MEMORY_CORE",
    "LETTA_MULTI_AGENT_CORE",
    "LETTA_SLEEPTIME_CORE",
    "LETTA_VOICE_SLEEPTIME_CORE",
    "MULTI_AGENT_TOOL_NAMES",
    "BaseToolSpec",
    "base_tool_names_for",
    "default_tool_rules_for",
    "includes_base_tool_rules",
    "multi_agent_tool_names",
]

BASE_FUNCTION_RETURN_CHAR_LIMIT = 50000

MULTI_AGENT_TOOL_NAMES = (
    "send_message_to_agent_and_wait_for_reply",
    "send_message_to_agents_matching_tags",
    "send_message_to_agent_async",
)
# Auto-attached when a folder is attached to an agent.
FILE_TOOL_NAMES = ("open_files", "grep_files", "semantic_search_files")

_TERMINAL_TOOLS = frozenset({"send_message", "send_message_to_agent_async", "memory_finish_edits"})
_CONTINUE_TOOLS = frozenset(
    {
        "conversation_search",
        "archival_memory_insert",
        "archival_memory_search",
        "core_memory_append",
        "core_memory_replace",
        "memory",
        "memory_apply_patch",
        "memory_replace",
        "memory_insert",
        "memory_rethink",
    }
)
# Models that follow loop rules poorly are spared the base rules unless the caller asks for them.
_RULELESS_MODEL_KEYWORDS = ("claude-4-sonnet", "claude-3-5-sonnet", "gpt-5", "gemini-2.5-pro")
_RULED_MODEL_KEYWORDS = ("mini",)


@dataclass(frozen=True)
class BaseToolSpec:
    """One built-in tool. `json_schema` is shared: read it, or take a copy with `to_tool_fields()`."""

    name: str
    tool_type: str
    description: str
    json_schema: dict[str, Any]
    enable_parallel_execution: bool = False
    return_char_limit: int = BASE_FUNCTION_RETURN_CHAR_LIMIT
    source_type: str = "python"

    @property
    def tags(self) -> list[str]:
        return [self.tool_type]

    def to_tool_fields(self) -> dict[str, Any]:
        """The Tool fields Letta stores for this base tool (everything but id and creator ids)."""
        return {
            "tool_type": self.tool_type,
            "description": self.description,
            "source_type": self.source_type,
            "name": self.name,
            "tags": self.tags,
            "source_code": None,
            "json_schema": copy.deepcopy(self.json_schema),
            "args_json_schema": None,
            "return_char_limit": self.return_char_limit,
            "pip_requirements": None,
            "npm_requirements": None,
            "default_requires_approval": None,
            "enable_parallel_execution": self.enable_parallel_execution,
            "metadata_": {},
            "project_id": None,
        }


def _spec(entry: ToolEntry) -> BaseToolSpec:
    schema = {
        "name": entry.name,
        "description": entry.description,
        "parameters": {"type": "object", "properties": entry.properties or {}, "required": list(entry.required)},
    }
    return BaseToolSpec(
        entry.name, entry.tool_type, entry.description, schema, enable_parallel_execution=entry.parallel
    )


BASE_TOOLS: dict[str, BaseToolSpec] = {entry.name: _spec(entry) for entry in BASE_TOOL_CATALOG}

# (agent types, tools), checked in Letta's order; the sleeptime branch sits between these in base_tool_names_for.
_TYPE_TOOLS: list[tuple[frozenset[str], tuple[str, ...]]] = [
    (frozenset({"voice_sleeptime_agent"}), ("store_memories", "rethink_user_memory", "finish_rethinking_memory")),
    (frozenset({"voice_convo_agent"}), ("send_message", "search_memory")),
    (frozenset({"sleeptime_agent"}), ("memory_replace", "memory_insert", "memory_rethink", "memory_finish_edits")),
]
_SLEEPTIME_CHAT_TOOLS = ("send_message", "conversation_search", "archival_memory_search")
_AFTER_SLEEPTIME: list[tuple[frozenset[str], tuple[str, ...]]] = [
    (frozenset({"memgpt_v2_agent"}), ("send_message", "conversation_search", "memory_insert", "memory_replace")),
    (frozenset({"react_agent", "workflow_agent"}), ()),
    (frozenset({"letta_v1_agent"}), ("conversation_search", "memory_insert", "memory_replace")),
]
_MEMGPT_TOOLS = (
    "send_message",
    "conversation_search",
    "core_memory_append",
    "core_memory_replace",
    "memory",
    "memory_apply_patch",
)


def base_tool_names_for(
    agent_type: str,
    *,
    enable_sleeptime: bool = False,
    include_multi_agent_tools: bool = False,
    production: bool = False,
) -> list[str]:
    """The built-in tools attached at agent creation when `include_base_tools` is true (SPEC 4.1).

    `production` mirrors LETTA_ENVIRONMENT=prod, which drops `send_message_to_agent_async`.
    """
    names = _type_tool_names(agent_type, enable_sleeptime)
    if include_multi_agent_tools:
        names += [n for n in multi_agent_tool_names(production=production) if n not in names]
    return names


def multi_agent_tool_names(*, production: bool = False) -> list[str]:
    """The tools `include_multi_agent_tools` attaches, with or without the base tools.

    `production` mirrors LETTA_ENVIRONMENT=prod, which drops `send_message_to_agent_async`."""
    return [n for n in MULTI_AGENT_TOOL_NAMES if not (production and n == "send_message_to_agent_async")]


def _type_tool_names(agent_type: str, enable_sleeptime: bool) -> list[str]:
    for types, names in _TYPE_TOOLS:
        if agent_type in types:
            return list(names)
    if enable_sleeptime:
        return list(_SLEEPTIME_CHAT_TOOLS)
    for types, names in _AFTER_SLEEPTIME:
        if agent_type in types:
            return list(names)
    return list(_MEMGPT_TOOLS)


def includes_base_tool_rules(
    agent_type: str,
    model: str = "",
    *,
    requested: bool | None = None,
    has_user_rules: bool = False,
    enable_sleeptime: bool = False,
    base_tools: bool = True,
) -> bool:
    """Whether agent creation adds base tool rules, from `include_base_tool_rules` (`requested`) and the model.

    A letta_v1 agent gets none by default only when it gets its base tools (`base_tools`) without sleeptime: a
    sleeptime-enabled one gets the rules (its send_message ends the turn), as in Letta, and so does one without base
    tools for the tools it names.
    """
    if requested is not None:
        return requested
    if agent_type == "letta_v1_agent" and base_tools and not has_user_rules and not enable_sleeptime:
        return False
    if agent_type == "sleeptime_agent":
        return True
    if any(keyword in model for keyword in _RULED_MODEL_KEYWORDS):
        return True
    return not any(keyword in model for keyword in _RULELESS_MODEL_KEYWORDS)


def default_tool_rules_for(
    agent_type: str,
    tool_names: Iterable[str],
    *,
    model: str = "",
    include_base_tool_rules: bool | None = None,
    has_user_rules: bool = False,
) -> list[dict[str, Any]]:
    """Letta's base tool rules as wire dicts, for the tools attached by name at creation (in that order).

    `send_message`, `send_message_to_agent_async` and `memory_finish_edits` end the loop; the other core and memory
    tools continue it. `letta_v1_agent` gets none unless rules were requested or the caller sent rules of its own.
    """
    if not includes_base_tool_rules(
        agent_type, model, requested=include_base_tool_rules, has_user_rules=has_user_rules
    ):
        return []
    rules: list[dict[str, Any]] = []
    for name in tool_names:
        if name in _TERMINAL_TOOLS:
            rules.append({"tool_name": name, "type": "exit_loop", "prompt_template": None})
        elif name in _CONTINUE_TOOLS:
            rules.append({"tool_name": name, "type": "continue_loop", "prompt_template": None})
    return rules
