"""Outbound HTTP to user-given URLs: the policy (`outbound`) and the guarded httpx transport (`transport`)."""
