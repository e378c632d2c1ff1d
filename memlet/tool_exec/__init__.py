"""Tool execution: built-in memory tools, user tool sandbox, call routing."""
