"""``POST /v1/chat/completions`` and the deprecated ``POST /v1/voice-beta/{agent_id}/chat/completions``: an agent
behind any OpenAI client (see ``turns/chat_completions.py``)."""

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse, Response, StreamingResponse

from memlet.turns.chat_completions import ChatCompletionRequest, agent_id_of, voice_request
from memlet.turns.chat_sending import ChatCompletionSender
from memlet.turns.deps import SendServiceDep

router = APIRouter()

_SSE = {"description": "Server-Sent Events stream (when stream=true)"}
_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Successful response",
        "content": {
            "application/json": {"schema": {"type": "object", "description": "ChatCompletion (when stream=false)"}},
            "text/event-stream": {"schema": {"type": "string", **_SSE}},
        },
    }
}
_VOICE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "Successful response", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
}


@router.post("/chat/completions", tags=["chat"], operation_id="create_chat_completion", responses=_RESPONSES)
async def create_chat_completion(body: ChatCompletionRequest, send: SendServiceDep) -> Response:
    """Send the last user message to the agent named by ``model``; its reply as a ChatCompletion or, with
    ``stream: true``, as ChatCompletionChunks."""
    agent_id = agent_id_of(body)
    sender = ChatCompletionSender(send)
    if not body.stream:
        return JSONResponse(await sender.complete(agent_id, body))
    return StreamingResponse(await sender.stream(agent_id, body), media_type="text/event-stream")


@router.post(
    "/voice-beta/{agent_id}/chat/completions",
    tags=["voice"],
    operation_id="create_voice_chat_completions",
    deprecated=True,
    responses=_VOICE_RESPONSES,
)
async def create_voice_chat_completions(
    agent_id: str, completion_request: Annotated[dict[str, Any], Body()], send: SendServiceDep
) -> StreamingResponse:
    """Deprecated voice route: stream the agent's reply to the last user message as ChatCompletionChunks."""
    body = voice_request(agent_id, completion_request)
    return StreamingResponse(await ChatCompletionSender(send).stream(agent_id, body), media_type="text/event-stream")
