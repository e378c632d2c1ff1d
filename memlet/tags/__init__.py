"""Tags: the distinct tags of an organization's agents and blocks (``GET /v1/tags/``)."""
