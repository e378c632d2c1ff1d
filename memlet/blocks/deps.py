"""The blocks services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep
from memlet.blocks.service import BlockService


async def get_block_service(request: Request, session: SessionDep) -> BlockService:
    return BlockService(session, request.app.state.rebuild_prompts)


BlockServiceDep = Annotated[BlockService, Depends(get_block_service)]
