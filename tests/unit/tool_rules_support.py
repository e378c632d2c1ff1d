"""The tool names the solver tests build their rules over."""

TOOLS = ["start", "next", "helper", "final", "end"]
