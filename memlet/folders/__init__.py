"""Folders (Letta's sources): CRUD, attachment to agents, and the deprecated `/v1/sources` aliases."""
