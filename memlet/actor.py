"""Who a request acts as: the user and their organization (resolved once per request by `memlet.api.deps`)."""

from dataclasses import dataclass

from memlet import ids


@dataclass(frozen=True)
class Actor:
    user_id: str
    organization_id: str


DEFAULT_ACTOR = Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)
