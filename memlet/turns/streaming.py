"""Loop events → public messages and Server-Sent Events, in Letta's exact wire format.

Each event is one ``data: <compact json>\\n\\n`` line; only errors carry an event name (``event: error``). A stream
ends with ``stop_reason``, then ``usage_statistics`` (success only), then ``data: [DONE]``; a cancelled run ends,
as Letta's cancellation-aware stream does, with ``stop_reason: cancelled`` and ``[DONE]`` only. In token mode the
fragments of a message share its ``id``; when the step commits, the parts already streamed are not sent again.
Heartbeat rows of V2 agents are stored but never shown in a send's response or stream (Letta filters them too).

Error types follow Letta: an error before the loop streamed anything keeps its own type when Letta's stream names
it (``llm_timeout``, ``llm_rate_limit``, ``llm_authentication``, ``llm_empty_response``; other LLM errors are
``llm_error``), else ``internal_error``; once a letta_v1 agent's stream has started, any error is an
``internal_error`` "An error occurred during agent execution." with the cause in ``detail``.
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel

from memlet.loop import events as ev
from memlet.loop.response import previous_message_id
from memlet.messages.error_events import error_text, stream_error
from memlet.messages.schemas import (
    ApprovalRequestMessage,
    AssistantMessage,
    EventMessage,
    HiddenReasoningMessage,
    LettaErrorMessage,
    LettaMessage,
    LettaStopReason,
    LettaUsageStatistics,
    MessageType,
    ReasoningMessage,
    StopReasonType,
    StoredMessage,
    SummaryMessage,
    ToolCallDelta,
    ToolCallMessage,
)
from memlet.messages.views import filter_message_types, is_heartbeat, otid_from_id, to_letta_messages

DONE = "data: [DONE]\n\n"
MID_STREAM_ERROR = "An error occurred during agent execution."
_DELTA_TYPES = {
    "assistant": "assistant_message",
    "reasoning": "reasoning_message",
    "hidden_reasoning": "hidden_reasoning_message",
    "tool_call": "tool_call_message",
    "approval": "approval_request_message",
}
_CONTENT_KINDS = ("assistant", "reasoning", "hidden_reasoning")


def sse(item: BaseModel) -> str:
    """One ``data:`` event holding the item's compact JSON."""
    return f"data: {item.model_dump_json()}\n\n"


def sse_error(item: LettaErrorMessage) -> str:
    return f"event: error\ndata: {item.model_dump_json()}\n\n"


@dataclass(frozen=True)
class ViewOptions:
    """How stored rows are shown to this client (the request's display options and the agent's loop kind)."""

    text_is_assistant: bool
    use_assistant_message: bool = True
    assistant_message_tool_name: str = "send_message"
    assistant_message_tool_kwarg: str = "message"
    include_types: Sequence[MessageType | str] | None = None
    reasoning_source: str = "reasoner_model"
    # A compaction's summary as a summary_message (the request's include_compaction_messages), else a user_message.
    summary_as_user: bool = True


def public_views(rows: Sequence[StoredMessage], opts: ViewOptions) -> list[LettaMessage]:
    """The committed rows as the client sees them (heartbeats left out), filtered by
    ``include_return_message_types``."""
    views = to_letta_messages(
        [row for row in rows if not is_heartbeat(row)],
        use_assistant_message=opts.use_assistant_message,
        assistant_message_tool_name=opts.assistant_message_tool_name,
        assistant_message_tool_kwarg=opts.assistant_message_tool_kwarg,
        text_is_assistant=opts.text_is_assistant,
        summary_as_user=opts.summary_as_user,
    )
    return filter_message_types(views, opts.include_types)


def delta_view(delta: ev.TokenDelta, run_id: str, reasoning_source: str = "reasoner_model") -> LettaMessage:
    """A token fragment as a partial message (tool-call fragments carry a single delta object, not a list)."""
    common = {
        "id": delta.message_id,
        "date": datetime.now(UTC),
        "otid": delta.otid,
        "step_id": delta.step_id,
        "run_id": run_id,
    }
    if delta.kind == "assistant":
        return AssistantMessage(**common, content=delta.text)
    if delta.kind == "hidden_reasoning":
        return HiddenReasoningMessage(**common, state="redacted", hidden_reasoning=delta.text)
    if delta.kind == "reasoning":
        source = "reasoner_model" if delta.native else reasoning_source
        return ReasoningMessage(**common, reasoning=delta.text, source=source, signature=delta.signature)  # type: ignore[arg-type]
    fragment = ToolCallDelta(name=delta.name, arguments=delta.arguments, tool_call_id=delta.tool_call_id)
    if delta.kind == "approval":
        return ApprovalRequestMessage(**common, tool_call=fragment, tool_calls=fragment)
    return ToolCallMessage(**common, tool_call=fragment, tool_calls=fragment)


def compaction_event(event: ev.CompactionStarted, run_id: str) -> EventMessage:
    """The event_message announcing a compaction (Letta Code shows it with the summary_message that follows).
    It is no stored message, so its id is a bare uuid4, as Letta's."""
    data = {
        "trigger": event.trigger,
        "context_token_estimate": event.context_token_estimate,
        "context_window": event.context_window,
    }
    return EventMessage(
        id=str(uuid.uuid4()),
        date=datetime.now(UTC),
        event_type="compaction",
        event_data=data,
        run_id=run_id,
        step_id=event.step_id,
    )


def streamed_summary(view: LettaMessage, summary: str) -> LettaMessage:
    """A compaction's summary row as Letta streams it: a summary_message carries the summary's own text (the
    stored row and later listings keep the packed system alert), and either form gets an otid derived from its
    id, as the stream's other messages have (the row itself has none)."""
    update: dict[str, object] = {"otid": view.otid or otid_from_id(view.id, 0)}
    if isinstance(view, SummaryMessage):
        update["summary"] = summary
    return view.model_copy(update=update)


class EventRenderer:
    """Turns one run's loop events into SSE chunks, remembering which message parts were already streamed."""

    def __init__(self, run_id: str, opts: ViewOptions) -> None:
        self.run_id = run_id
        self.opts = opts
        self._streamed: set[tuple[str, str]] = set()
        # Approval-gated calls whose fragments were streamed: their committed request is not sent again (a client
        # adding the whole arguments to its fragments would run them twice over).
        self._streamed_approvals: set[str] = set()
        self._started = False  # whether the loop's output has reached the stream (pings do not count)

    def _wanted(self, message_type: str) -> bool:
        return self.opts.include_types is None or message_type in {str(t) for t in self.opts.include_types}

    def render(self, event: ev.LoopEvent) -> list[str]:
        chunks = self._render(event)
        if not isinstance(event, ev.RunFinished | ev.RunFailed):
            self._started = self._started or bool(chunks)
        return chunks

    def _render(self, event: ev.LoopEvent) -> list[str]:
        if isinstance(event, ev.TokenDelta):
            view = delta_view(event, self.run_id, self.opts.reasoning_source)
            self._streamed.add((event.message_id, _DELTA_TYPES[event.kind]))
            if event.kind in _CONTENT_KINDS:
                # A response whose calls all wait for approval is stored as one approval row, the assistant id
                # minus one (`response.approval_request`): its reasoning and text were streamed already.
                self._streamed.add((previous_message_id(event.message_id), _DELTA_TYPES[event.kind]))
            if event.kind == "approval" and event.tool_call_id:
                self._streamed_approvals.add(event.tool_call_id)
            return [sse(view)] if self._wanted(view.message_type) else []
        if isinstance(event, ev.MessagesCommitted):
            views = public_views(event.messages, self.opts)
            if event.summary is not None:
                views = [streamed_summary(v, event.summary) for v in views]
            return [sse(v) for v in views if not self._was_streamed(v)]
        if isinstance(event, ev.CompactionStarted):
            view = compaction_event(event, self.run_id)
            return [sse(view)] if self._wanted(view.message_type) else []
        if isinstance(event, ev.RunFinished):
            if event.stop_reason == "cancelled":
                return [sse(stop_reason(event.stop_reason)), DONE]
            return [sse(stop_reason(event.stop_reason)), sse(usage_of(event.usage)), DONE]
        if self._started and self.opts.text_is_assistant:
            # The cause, as Letta's str(error) gives it (an LLM error's provider detail, not its fixed message).
            detail = error_text(event.error)
            item = LettaErrorMessage(
                run_id=self.run_id, error_type="internal_error", message=MID_STREAM_ERROR, detail=detail
            )
            return [sse(stop_reason(event.stop_reason)), sse_error(item), DONE]
        return self.failure(event.error, event.stop_reason, event.error_type)

    def _was_streamed(self, view: LettaMessage) -> bool:
        if (view.id, view.message_type) in self._streamed:
            return True
        if not isinstance(view, ApprovalRequestMessage) or not isinstance(view.tool_calls, list):
            return False
        return bool(view.tool_calls) and all(c.tool_call_id in self._streamed_approvals for c in view.tool_calls)

    def failure(self, error: BaseException, reason: str = "error", error_type: str | None = None) -> list[str]:
        """The error tail of a stream: stop reason, the error event, [DONE] (no usage, as in Letta)."""
        return [sse(stop_reason(reason)), sse_error(stream_error(self.run_id, error, error_type)), DONE]


def stop_reason(reason: str) -> LettaStopReason:
    return LettaStopReason(stop_reason=StopReasonType(reason))


def usage_of(usage: dict[str, object]) -> LettaUsageStatistics:
    return LettaUsageStatistics.model_validate({**usage, "message_type": "usage_statistics"})
