"""Template deployments (Letta's ``/v1/_internal_templates``): agents, blocks and groups stamped with a deployment."""
