"""The agent loop."""
