"""Identities: the users and organizations agents belong to."""
