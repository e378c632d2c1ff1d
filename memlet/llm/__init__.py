"""LLM and embedding clients for OpenAI-compatible providers."""
