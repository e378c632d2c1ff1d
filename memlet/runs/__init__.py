"""Runs (one processed request) and their steps (one LLM call each)."""
