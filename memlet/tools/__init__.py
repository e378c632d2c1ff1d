"""Tools: schemas, JSON schema derivation, base tools."""
