"""Letta's ``/v1/_internal_blocks``: list, create and delete blocks, the public handlers under internal paths."""

from fastapi import APIRouter

from memlet.blocks.router import create_block, delete_block, list_blocks
from memlet.blocks.schemas import Block

router = APIRouter(prefix="/_internal_blocks", tags=["_internal_blocks"])

router.add_api_route(
    "/",
    list_blocks,
    methods=["GET"],
    operation_id="list_internal_blocks",
    response_model=list[Block],
    summary="List Internal Blocks",
)
router.add_api_route(
    "/",
    create_block,
    methods=["POST"],
    operation_id="create_internal_block",
    response_model=Block,
    summary="Create Internal Block",
)
router.add_api_route(
    "/{block_id}",
    delete_block,
    methods=["DELETE"],
    operation_id="delete_internal_block",
    summary="Delete Internal Block",
)
