"""The messages services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import ActorDep, SessionDep
from memlet.messages.search import MessageSearchService
from memlet.messages.service import MessageService


async def get_message_service(session: SessionDep, actor: ActorDep) -> MessageService:
    return MessageService(session, actor)


MessageServiceDep = Annotated[MessageService, Depends(get_message_service)]


async def get_message_search_service(request: Request, session: SessionDep, actor: ActorDep) -> MessageSearchService:
    """Search with the app's embedder (`memlet.app.lifespan`), used only where message vectors exist."""
    return MessageSearchService(session, actor, getattr(request.app.state, "embedder", None))


MessageSearchServiceDep = Annotated[MessageSearchService, Depends(get_message_search_service)]
