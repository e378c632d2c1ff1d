"""Sleeptime agents: a background agent that reviews a main agent's conversations and edits its memory."""
