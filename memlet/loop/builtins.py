"""Every built-in tool the server runs itself: the memory and core tools, the file tools and the multi-agent tools
(each called with the step's `ToolContext`), and the web tools (called with a `WebAccess`: `web_tools`)."""

from memlet.loop.builtin_tools import BUILTIN_TOOLS as CORE_TOOLS
from memlet.loop.builtin_tools import UNTRUNCATED_TOOLS, BuiltinTool
from memlet.loop.file_tools import FILE_TOOLS
from memlet.loop.multi_agent_tools import MULTI_AGENT_TOOLS
from memlet.loop.web_tools import WEB_TOOLS

BUILTIN_TOOLS: dict[str, BuiltinTool] = {**CORE_TOOLS, **FILE_TOOLS, **MULTI_AGENT_TOOLS}

__all__ = ["BUILTIN_TOOLS", "UNTRUNCATED_TOOLS", "WEB_TOOLS"]
