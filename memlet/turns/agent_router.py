"""``/v1/agents/{agent_id}/...`` message routes: send (blocking, streamed, async), list, cancel, reset, context."""

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

from memlet.agents.parts import ContextWindowOverview
from memlet.agents.schemas import AgentState
from memlet.agents.service import AgentService
from memlet.api.clients import is_sdk_v1
from memlet.api.deps import ActorDep, SessionDep
from memlet.api.validators import PageLimit
from memlet.errors import MethodNotAllowedError, UnprocessableError
from memlet.ids import AgentId, MessageId
from memlet.messages.deps import MessageSearchServiceDep
from memlet.messages.requests import (
    LettaAsyncRequest,
    LettaRequest,
    LettaStreamingRequest,
    ensure_messages,
    ensure_streaming_options,
)
from memlet.messages.schemas import EDITING_REMOVED, LettaMessage, LettaMessageUpdate, LettaResponse, MessageType
from memlet.messages.search import MessageSearchRequest, MessageSearchResult
from memlet.messages.service import HistoryQuery
from memlet.runs.schemas import Run
from memlet.turns.capture import CaptureMessagesRequest, capture_messages
from memlet.turns.compaction import CompactionRequest, CompactionResponse, summarize
from memlet.turns.context_window import context_window
from memlet.turns.deps import (
    AgentMessageReaderDep,
    AgentMessageServiceDep,
    LoopDepsDep,
    SendServiceDep,
)
from memlet.turns.preview import preview_request

router = APIRouter(prefix="/agents", tags=["agents"])

_SSE = {"text/event-stream": {"schema": {"type": "string", "description": "Server-Sent Events stream"}}}


class CancelAgentRunRequest(BaseModel):
    run_ids: list[str] | None = None


class ResetMessagesRequest(BaseModel):
    add_default_initial_messages: bool = False


def sse_response(chunks: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(chunks, media_type="text/event-stream")


@router.post("/messages/search", operation_id="search_messages", response_model=list[MessageSearchResult])
async def search_messages(body: MessageSearchRequest, service: MessageSearchServiceDep) -> Any:
    """Hybrid (full-text + vector where messages have vectors) search over the organization's messages, best
    first, with each hit's ranks and RRF score."""
    return await service.search(body)


@router.get("/{agent_id}/messages", operation_id="list_messages", response_model=list[LettaMessage])
async def list_messages(
    agent_id: AgentId,
    service: AgentMessageReaderDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] | None = None,
    order_by: Literal["created_at"] = "created_at",
    group_id: str | None = None,
    conversation_id: str | None = None,
    use_assistant_message: Annotated[bool, Query(deprecated=True)] = True,
    assistant_message_tool_name: Annotated[str, Query(deprecated=True)] = "send_message",
    assistant_message_tool_kwarg: Annotated[str, Query(deprecated=True)] = "message",
    include_err: bool | None = None,
    include_return_message_types: Annotated[list[MessageType] | None, Query()] = None,
) -> Any:
    """List an agent's message history (no `order`: the newest `limit` messages, oldest first)."""
    query = HistoryQuery(
        before=before,
        after=after,
        limit=limit,
        order=order,
        group_id=group_id,
        conversation_id=conversation_id,
        use_assistant_message=use_assistant_message,
        assistant_message_tool_name=assistant_message_tool_name,
        assistant_message_tool_kwarg=assistant_message_tool_kwarg,
        include_err=include_err,
        include_return_message_types=include_return_message_types,
    )
    return await service.list_for_agent(agent_id, query)


@router.post(
    "/{agent_id}/messages",
    operation_id="send_message",
    response_model=LettaResponse,
    responses={
        200: {
            "content": {
                "text/event-stream": {
                    "schema": {"type": "string", "description": "Server-Sent Events (streaming=true)"}
                }
            }
        }
    },
)
async def send_message(
    agent_id: AgentId, body: LettaStreamingRequest, request: Request, service: SendServiceDep
) -> Any:
    """Send messages to an agent and get its reply; with `streaming=true` the reply is an SSE stream."""
    ensure_messages(body)
    ensure_streaming_options(body)
    if not body.streaming:
        return await service.send(agent_id, body, "send_message", request_logprobs=True)
    if not is_sdk_v1(request):
        raise UnprocessableError("streaming=true is only supported for SDK v1.0+ clients.")
    return sse_response(await service.open_stream(agent_id, body, "send_message"))


@router.post(
    "/{agent_id}/messages/stream",
    operation_id="create_agent_message_stream",
    deprecated=True,
    responses={200: {"content": _SSE}},
)
async def create_agent_message_stream(agent_id: AgentId, body: LettaStreamingRequest, service: SendServiceDep) -> Any:
    """Send messages and stream the agent's reply as Server-Sent Events (always streams)."""
    ensure_messages(body)
    body.streaming = True
    return sse_response(await service.open_stream(agent_id, body, "send_message_streaming"))


@router.post(
    "/{agent_id}/messages/preview-raw-payload", operation_id="preview_model_request", response_model=dict[str, Any]
)
async def preview_model_request(
    agent_id: AgentId,
    body: Annotated[LettaRequest | LettaStreamingRequest, Body()],
    deps: LoopDepsDep,
    actor: ActorDep,
    service: SendServiceDep,
) -> Any:
    """Show the raw LLM request body this input would produce, without calling the model or storing anything."""
    ensure_messages(body)
    return await preview_request(deps, actor, agent_id, body, await service.model_override(body))


@router.post("/{agent_id}/messages/async", operation_id="create_agent_message_async", response_model=Run)
async def create_agent_message_async(agent_id: AgentId, body: LettaAsyncRequest, service: SendServiceDep) -> Any:
    """Start processing messages in the background and return the run to poll."""
    ensure_messages(body)
    return await service.send_async(agent_id, body)


@router.post("/{agent_id}/messages/capture", operation_id="capture_messages", include_in_schema=False)
async def capture_agent_messages(
    agent_id: AgentId, body: CaptureMessagesRequest, request: Request, actor: ActorDep
) -> Any:
    """Store a user/assistant exchange that happened outside memlet (hidden, as in Letta; agentic-learning SDK)."""
    state = request.app.state
    sleeptime = getattr(state, "sleeptime_runs", None)
    return JSONResponse(await capture_messages(state.sessionmaker, sleeptime, actor, agent_id, body))


@router.post("/{agent_id}/messages/cancel", operation_id="cancel_message", response_model=dict[str, Any])
async def cancel_message(
    agent_id: AgentId,
    service: AgentMessageServiceDep,
    body: Annotated[CancelAgentRunRequest | None, Body()] = None,
) -> Any:
    """Cancel the given runs of an agent, or all its active runs."""
    return await service.cancel(agent_id, body.run_ids if body else None)


@router.patch(
    "/{agent_id}/messages/{message_id}", operation_id="modify_message", deprecated=True, response_model=LettaMessage
)
async def modify_message(agent_id: AgentId, message_id: MessageId, body: LettaMessageUpdate, _actor: ActorDep) -> Any:
    """Message editing was removed in Letta 0.16: messages are immutable (always 405)."""
    raise MethodNotAllowedError(EDITING_REMOVED)


@router.patch("/{agent_id}/reset-messages", operation_id="reset_messages", response_model=AgentState | None)
async def reset_messages(
    agent_id: AgentId,
    body: ResetMessagesRequest,
    request: Request,
    session: SessionDep,
    service: AgentMessageServiceDep,
    actor: ActorDep,
) -> Any:
    """Clear the agent's context window except its system message; stored messages stay searchable.

    Answers the agent's state, or `null` to a 1.x SDK (Letta skips building the state for those)."""
    await service.reset(agent_id, add_default_initial_messages=body.add_default_initial_messages)
    if is_sdk_v1(request):
        return None
    return await AgentService(session, request.app.state.catalog).get_state(actor, agent_id)


@router.get(
    "/{agent_id}/context",
    operation_id="retrieve_agent_context_window",
    deprecated=True,
    response_model=ContextWindowOverview,
)
async def retrieve_agent_context_window(
    agent_id: AgentId, session: SessionDep, actor: ActorDep, conversation_id: str | None = None
) -> Any:
    """Show what the agent's next LLM call would contain, with token counts per section."""
    # A conversation's own window (its system message, its isolated blocks); "default" is the agent's own.
    thread = conversation_id if conversation_id and conversation_id != "default" else None
    return await context_window(session, actor.organization_id, agent_id, thread)


@router.post("/{agent_id}/recompile", operation_id="recompile_agent", response_model=str)
async def recompile_agent(
    agent_id: AgentId, service: AgentMessageServiceDep, update_timestamp: bool = False, dry_run: bool = False
) -> Any:
    """Recompile the agent's system prompt from its current memory and return it."""
    return await service.recompile(agent_id, update_timestamp=update_timestamp, dry_run=dry_run)


@router.post(
    "/{agent_id}/system-prompt/recompile",
    operation_id="recompile_agent_system_prompt",
    deprecated=True,
    response_model=str,
)
async def recompile_agent_system_prompt(
    agent_id: AgentId, service: AgentMessageServiceDep, update_timestamp: bool = False, dry_run: bool = False
) -> Any:
    """Deprecated alias of POST /v1/agents/{agent_id}/recompile."""
    return await service.recompile(agent_id, update_timestamp=update_timestamp, dry_run=dry_run)


@router.post("/{agent_id}/summarize", operation_id="summarize_messages", response_model=CompactionResponse)
async def summarize_messages(
    agent_id: AgentId,
    deps: LoopDepsDep,
    actor: ActorDep,
    body: Annotated[CompactionRequest | None, Body()] = None,
) -> Any:
    """Summarize the oldest part of the agent's context window into one message."""
    return await summarize(deps, actor, agent_id, settings=body.compaction_settings if body else None)
