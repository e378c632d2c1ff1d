"""Letta's built-in tools as data: name, tool type, description and parameters of each, in Letta's order.

Tool names, tool types, parameter names, types, enums and required lists are the contract with Letta clients and
match Letta 0.16.8. The descriptions (the text the LLM reads) are memlet's own wording of the same guidance.
``memlet.tools.base_tools`` turns these entries into ``BaseToolSpec``s; their behaviour lives in ``memlet.tool_exec``.
"""

from memlet.tools.base_tool_catalog.builtin import BUILTIN_TOOLS
from memlet.tools.base_tool_catalog.core import CORE_TOOLS
from memlet.tools.base_tool_catalog.entry import (
    LETTA_BUILTIN,
    LETTA_CORE,
    LETTA_FILES_CORE,
    LETTA_MEMORY_CORE,
    LETTA_MULTI_AGENT_CORE,
    LETTA_SLEEPTIME_CORE,
    LETTA_VOICE_SLEEPTIME_CORE,
    ToolEntry,
)
from memlet.tools.base_tool_catalog.files import FILE_TOOLS
from memlet.tools.base_tool_catalog.memory import MEMORY_TOOLS
from memlet.tools.base_tool_catalog.multi_agent import MULTI_AGENT_TOOLS
from memlet.tools.base_tool_catalog.sleeptime import SLEEPTIME_TOOLS
from memlet.tools.base_tool_catalog.voice_sleeptime import VOICE_SLEEPTIME_TOOLS

__all__ = [
    "BASE_TOOL_CATALOG",
    "LETTA_BUILTIN",
    "LETTA_CORE",
    "LETTA_FILES_CORE",
    "LETTA_MEMORY_CORE",
    "LETTA_MULTI_AGENT_CORE",
    "LETTA_SLEEPTIME_CORE",
    "LETTA_VOICE_SLEEPTIME_CORE",
    "ToolEntry",
]

# In Letta's order, family by family.
BASE_TOOL_CATALOG: list[ToolEntry] = [
    *CORE_TOOLS,
    *MEMORY_TOOLS,
    *SLEEPTIME_TOOLS,
    *MULTI_AGENT_TOOLS,
    *FILE_TOOLS,
    *BUILTIN_TOOLS,
    *VOICE_SLEEPTIME_TOOLS,
]
