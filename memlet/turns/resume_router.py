"""``POST /v1/runs/{run_id}/stream``: resume a background run's stream from its chunk log (``resume``)."""

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import StreamingResponse

from memlet.api.deps import ActorDep, SessionmakerDep
from memlet.runs.schemas import RetrieveStreamRequest
from memlet.turns.resume import stream_run

router = APIRouter(prefix="/runs", tags=["runs"])
_SSE = {"text/event-stream": {"schema": {"type": "string", "description": "Server-Sent Events stream"}}}


@router.post("/{run_id}/stream", operation_id="retrieve_stream_for_run", responses={200: {"content": _SSE}})
async def retrieve_stream_for_run(
    run_id: str,
    maker: SessionmakerDep,
    actor: ActorDep,
    body: Annotated[RetrieveStreamRequest | None, Body()] = None,
) -> Any:
    """Replay a background run's stream after `starting_after`, then follow it to the end ([DONE])."""
    chunks = await stream_run(maker, actor, run_id, body or RetrieveStreamRequest())
    return StreamingResponse(chunks, media_type="text/event-stream")
