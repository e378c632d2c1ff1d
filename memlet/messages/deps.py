"""The messages services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import ActorDep, SessionDep
from memlet.messages.service import MessageService


async def get_message_service(session: SessionDep, actor: ActorDep) -> MessageService:
    return MessageService(session, actor)


MessageServiceDep = Annotated[MessageService, Depends(get_message_service)]
