"""Messages: wire schemas, the stored-row → LettaMessage view, and the /v1/agents/{id}/messages routes."""
