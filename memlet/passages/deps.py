"""The passage service of a request: the request's session and the app's embedder."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep
from memlet.passages.service import PassageService


async def get_passage_service(request: Request, session: SessionDep) -> PassageService:
    return PassageService(session, request.app.state.embedder)


PassageServiceDep = Annotated[PassageService, Depends(get_passage_service)]
