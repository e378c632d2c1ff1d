"""Archival memory passages: embeddings, storage at true dimension, indexed search."""
