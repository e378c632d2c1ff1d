"""``/v1/conversations/{id}/...`` routes that drive the loop: send, preview, stream (resume), compact, recompile,
cancel.

`{id}` is `conv-<uuid4>`, `default` (with `agent_id`) or, deprecated, an agent id (its default thread). Sends go
through the one `SendService` and the one loop with the conversation set (`ConversationSendService`).
"""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.api.deps import ActorDep, SessionDep, SessionmakerDep
from memlet.conversations.deps import ConversationServiceDep
from memlet.conversations.schemas import ConversationCompactionRequest, ConversationMessageRequest
from memlet.conversations.service import Thread
from memlet.conversations.system_message import conversation_system_text, refresh_conversation_system_message
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.ids import ThreadId
from memlet.loop.cancel import cancel_runs
from memlet.messages.requests import ensure_messages
from memlet.messages.schemas import LettaResponse
from memlet.runs.repository import RunRepository
from memlet.runs.schemas import RetrieveStreamRequest
from memlet.turns.agent_messages import AgentMessageService
from memlet.turns.agent_router import sse_response
from memlet.turns.compaction import CompactionResponse, summarize
from memlet.turns.conversation_arrival import arrive
from memlet.turns.conversation_sending import ConversationSendService
from memlet.turns.deps import LoopDepsDep
from memlet.turns.preview import preview_request
from memlet.turns.resume import NO_ACTIVE, stream_selected
from memlet.turns.send_request import request_identity

router = APIRouter(prefix="/conversations", tags=["conversations"])

AgentQuery = Annotated[str | None, Query(description="Agent ID for agent-direct mode with 'default' conversation")]
_SSE = {
    "text/event-stream": {
        "schema": {"type": "string", "description": "Server-Sent Events stream (default, when streaming=true)"}
    }
}


async def release(session: AsyncSession) -> None:
    """End the request's read-only transaction so its pooled connection is free during a long call (a turn, a
    stream, an LLM call) that works through its own short transactions; the rows read stay usable (detached)."""
    await session.commit()


def send_service(request: Request, deps: LoopDepsDep, actor: Actor, thread: Thread) -> ConversationSendService:
    state = request.app.state
    catalog, sleeptime = getattr(state, "catalog", None), getattr(state, "sleeptime_runs", None)
    return ConversationSendService(deps, actor, state.run_worker.turns, catalog, thread, sleeptime)


@router.post(
    "/{conversation_id}/messages",
    operation_id="send_conversation_message",
    response_model=LettaResponse,
    responses={200: {"content": _SSE}},
)
async def send_conversation_message(
    conversation_id: ThreadId,
    body: ConversationMessageRequest,
    request: Request,
    deps: LoopDepsDep,
    actor: ActorDep,
) -> Any:
    """Send messages to a conversation (or, with `default` + `agent_id`, the agent's own thread); streams by default."""
    ensure_messages(body)  # stream-only options on a blocking send are ignored here, as Letta does (no 422)
    token = request_identity(body)[0] if body.streaming else None
    arrival = await arrive(deps.sessionmaker, actor, conversation_id, body.agent_id, token)
    thread = arrival.thread
    service = send_service(request, deps, actor, thread)
    service.arrived(arrival)
    run_type = "send_conversation_message" if thread.conversation else "send_message"
    if not body.streaming:
        return await service.send(thread.agent.id, body, run_type)
    return sse_response(await service.open_stream(thread.agent.id, body, run_type))


@router.post(
    "/{conversation_id}/messages/preview-raw-payload",
    operation_id="preview_conversation_model_request",
    response_model=dict[str, Any],
)
async def preview_conversation_model_request(
    conversation_id: ThreadId,
    body: ConversationMessageRequest,
    request: Request,
    deps: LoopDepsDep,
    actor: ActorDep,
    session: SessionDep,
    conversations: ConversationServiceDep,
) -> Any:
    """The raw LLM request this input would produce in the conversation, without calling the model."""
    ensure_messages(body)
    thread = await conversations.thread(conversation_id, body.agent_id)
    await release(session)
    override = await send_service(request, deps, actor, thread).model_override(body)
    conv_id = thread.conversation.id if thread.conversation else None
    return await preview_request(deps, actor, thread.agent.id, body, override, conv_id)


@router.post("/{conversation_id}/compact", operation_id="compact_conversation", response_model=CompactionResponse)
async def compact_conversation(
    conversation_id: ThreadId,
    deps: LoopDepsDep,
    actor: ActorDep,
    session: SessionDep,
    conversations: ConversationServiceDep,
    body: Annotated[ConversationCompactionRequest | None, Body()] = None,
) -> Any:
    """Summarize the oldest part of the conversation's context window into one message."""
    thread = await conversations.thread(conversation_id, body.agent_id if body else None)
    await release(session)
    conv_id = thread.conversation.id if thread.conversation else None
    settings = body.compaction_settings if body else None
    return await summarize(deps, actor, thread.agent.id, conv_id, settings, compact_route=True)


@router.post("/{conversation_id}/recompile", operation_id="recompile_conversation", response_model=str)
async def recompile_conversation(
    conversation_id: ThreadId,
    session: SessionDep,
    actor: ActorDep,
    conversations: ConversationServiceDep,
    dry_run: bool = False,
    body: Annotated[ConversationCompactionRequest | None, Body()] = None,
) -> Any:
    """Recompile the conversation's system prompt (its isolated blocks, its id) and return it."""
    thread = await conversations.thread(conversation_id, body.agent_id if body else None)
    if thread.conversation is None:
        return await AgentMessageService(session, actor).recompile(
            thread.agent.id, update_timestamp=True, dry_run=dry_run
        )
    if dry_run:
        return await conversation_system_text(session, thread.agent, thread.conversation)
    return await refresh_conversation_system_message(session, thread.agent, thread.conversation)


@router.post("/{conversation_id}/cancel", operation_id="cancel_conversation", response_model=dict[str, Any])
async def cancel_conversation(
    conversation_id: ThreadId,
    session: SessionDep,
    conversations: ConversationServiceDep,
    agent_id: AgentQuery = None,
) -> Any:
    """Cancel the thread's active runs. The default thread's cancel leaves other conversations' runs alone. With
    none active, the 409 names the path's id as Letta does (`default` stays `default`)."""
    thread = await conversations.thread(conversation_id, agent_id)
    conv_id = thread.conversation.id if thread.conversation else None
    run_ids = await RunRepository(session).active_in_thread(thread.agent.id, conv_id)
    if not run_ids:
        raise ConflictError(f"CONFLICT: No active runs to cancel for conversation {conversation_id}")
    return await cancel_runs(session, thread.agent.id, run_ids)


@router.post(
    "/{conversation_id}/stream",
    operation_id="retrieve_conversation_stream",
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string", "description": "Server-Sent Events stream"}}}
        }
    },
)
async def retrieve_conversation_stream(
    conversation_id: ThreadId,
    maker: SessionmakerDep,
    actor: ActorDep,
    session: SessionDep,
    conversations: ConversationServiceDep,
    body: Annotated[RetrieveStreamRequest | None, Body()] = None,
) -> Any:
    """Resume a background run of the thread (by run id, otid, or its newest active run) after `starting_after`.

    As in Letta, a run id or otid is looked up as is (the path is not resolved); without them, a thread that does
    not exist has no active run either (Letta's 400, not a 404)."""
    req = body or RetrieveStreamRequest()
    if req.run_id or req.otid:
        await release(session)
        return StreamingResponse(await stream_selected(maker, actor, req), media_type="text/event-stream")
    try:
        thread = await conversations.thread(conversation_id, req.agent_id)
    except NotFoundError:
        raise BadRequestError(NO_ACTIVE) from None
    await release(session)
    conv_id = thread.conversation.id if thread.conversation else None
    chunks = await stream_selected(maker, actor, req, agent_id=thread.agent.id, conversation_id=conv_id)
    return StreamingResponse(chunks, media_type="text/event-stream")
