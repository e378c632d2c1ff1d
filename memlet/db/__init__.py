"""Database layer: engine, sessions, embedded Postgres, advisory locks and the ORM models."""
