"""Memory blocks: wire models, standalone and per-agent core memory."""
