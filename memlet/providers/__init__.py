"""Providers and models: LLM/embedding configuration and the model listings."""
