"""Agent files (`.af`): export an agent as Letta's v2 `AgentFileSchema`, import v2 and legacy files."""
