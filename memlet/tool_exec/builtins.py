"""Every built-in tool the server runs itself: the memory and core tools, and the file tools."""

from memlet.tool_exec.file_tools import FILE_TOOLS
from memlet.tool_exec.memory_tools import BUILTIN_TOOLS as CORE_TOOLS
from memlet.tool_exec.memory_tools import UNTRUNCATED_TOOLS, BuiltinTool

BUILTIN_TOOLS: dict[str, BuiltinTool] = {**CORE_TOOLS, **FILE_TOOLS}

__all__ = ["BUILTIN_TOOLS", "UNTRUNCATED_TOOLS"]
