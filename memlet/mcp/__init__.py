"""MCP servers: registration, tool discovery and execution over the official `mcp` SDK."""
