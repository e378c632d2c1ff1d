"""Health check."""
