"""``POST /v1/chat/completions``: an agent behind any OpenAI client (see ``turns/chat_completions.py``)."""

from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from memlet.agents.repository import AgentRepository
from memlet.messages.requests import LettaStreamingRequest, MessageCreate
from memlet.turns.chat_completions import (
    ChatChunkRenderer,
    ChatCompletionRequest,
    agent_id_of,
    ensure_streamed,
    last_user_content,
)
from memlet.turns.deps import SendServiceDep
from memlet.turns.streaming import ViewOptions

router = APIRouter(tags=["chat"])

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Successful response",
        "content": {
            "text/event-stream": {
                "schema": {"type": "string", "description": "Server-Sent Events stream (when stream=true)"}
            },
        },
    }
}


@router.post("/chat/completions", operation_id="create_chat_completion", responses=_RESPONSES)
async def create_chat_completion(body: ChatCompletionRequest, send: SendServiceDep) -> StreamingResponse:
    """Send the last user message to the agent named by ``model`` and stream its reply as ChatCompletionChunks."""
    agent_id = agent_id_of(body)
    async with send.deps.sessionmaker() as session:
        agent = await AgentRepository(session).get_or_404(send.actor.organization_id, agent_id)
        model = str((agent.llm_config or {}).get("model") or "")
    content = last_user_content(body)
    ensure_streamed(body)
    request = LettaStreamingRequest(
        messages=[MessageCreate(role="user", content=content)],  # type: ignore[arg-type]
        streaming=True,
        stream_tokens=True,
        include_pings=False,
    )

    def renderer(run_id: str, opts: ViewOptions) -> ChatChunkRenderer:
        return ChatChunkRenderer(run_id, opts, model)

    chunks = await send.open_stream(agent_id, request, "openai_chat_completions", renderer_for=renderer)
    return StreamingResponse(chunks, media_type="text/event-stream")
