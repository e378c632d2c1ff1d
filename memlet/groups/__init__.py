"""Groups: several agents under one manager pattern (CRUD, shared blocks, the group's messages)."""
