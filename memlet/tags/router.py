"""``GET /v1/tags/``: every tag used by the organization's agents and blocks."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.api.deps import ActorDep, SessionDep
from memlet.api.validators import PageLimit
from memlet.tags.repository import TagPage, TagRepository

router = APIRouter(prefix="/tags", tags=["tag", "admin"])


@router.get("/", operation_id="list_tags", response_model=list[str])
async def list_tags(
    session: SessionDep,
    actor: ActorDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 50,
    order: Literal["asc", "desc"] = "asc",
    order_by: Literal["name"] = "name",
    query_text: Annotated[str | None, Query(deprecated=True)] = None,
    name: str | None = None,
) -> Any:
    """List the distinct tags of agents and blocks, alphabetically by default."""
    page = TagPage(before=before, after=after, limit=limit, order=order)
    return await TagRepository(session).distinct_tags(actor.organization_id, page, text=name or query_text)
