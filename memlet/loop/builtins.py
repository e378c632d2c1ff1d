"""Every built-in tool the server runs itself: the memory and core tools, and the file tools."""

from memlet.loop.builtin_tools import BUILTIN_TOOLS as CORE_TOOLS
from memlet.loop.builtin_tools import UNTRUNCATED_TOOLS, BuiltinTool
from memlet.loop.file_tools import FILE_TOOLS

BUILTIN_TOOLS: dict[str, BuiltinTool] = {**CORE_TOOLS, **FILE_TOOLS}

__all__ = ["BUILTIN_TOOLS", "UNTRUNCATED_TOOLS"]
