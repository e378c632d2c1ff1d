"""Archives: named passage stores that agents share (`/v1/archives`, attach/detach to agents)."""
