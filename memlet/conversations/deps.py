"""The conversation service as a FastAPI dependency."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import ActorDep, SessionDep
from memlet.conversations.service import ConversationService


async def get_conversation_service(session: SessionDep, actor: ActorDep) -> ConversationService:
    return ConversationService(session, actor)


ConversationServiceDep = Annotated[ConversationService, Depends(get_conversation_service)]
