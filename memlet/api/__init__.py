"""HTTP layer shared by every router: dependencies, pagination, middleware and the v1 router list."""
