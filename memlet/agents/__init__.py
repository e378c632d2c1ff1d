"""Agents: the agent state wire models, CRUD and context window."""
