"""What `run_agent` yields: committed messages, optional token deltas, and exactly one final event.

MessagesCommitted   after each step's commit: the step's new messages, oldest first (never the user's input)
TokenDelta          only with stream_tokens: a text / reasoning / tool-call / approval-request fragment
CompactionStarted   only with include_compaction_messages: a compaction happened (then its summary is committed)
RunFinished         the run ended normally (end_turn, max_steps, tool_rule, requires_approval, cancelled)
RunFailed           the run ended with an error (llm_api_error, no_tool_call, invalid_llm_response, error ...)
"""

from dataclasses import dataclass, field
from typing import Any, Literal

from memlet.messages.schemas import StoredMessage


@dataclass(frozen=True)
class MessagesCommitted:
    """`summary`: set when the one message is a compaction's summary row; the summary's own text (the row holds
    it packed in a system alert), which a stream shows."""

    messages: list[StoredMessage]
    summary: str | None = None


DeltaKind = Literal["assistant", "reasoning", "hidden_reasoning", "tool_call", "approval"]


@dataclass(frozen=True)
class TokenDelta:
    """A streamed fragment of the message `message_id` (its public part `otid`); both equal those of the row
    the step commits and of its public views, and so does `step_id`.

    kind "assistant" / "reasoning" carry `text` ("hidden_reasoning": the redacted thinking's data); kind "tool_call"
    (shown as tool_call_message) and "approval" (an approval-gated call, shown as approval_request_message) carry
    `tool_call_id` plus `name` on the first fragment and `arguments` fragments afterwards.
    """

    kind: DeltaKind
    message_id: str
    otid: str
    text: str = ""
    tool_call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    step_id: str | None = None  # the step being streamed (the committed row's step_id)
    # Reasoning the model produced as such (thinking blocks, reasoning_content), not thoughts a V2 agent writes
    # in its `thinking` argument or its text: Letta streams it as the reasoner's in every loop.
    native: bool = False
    # A V2 agent's Claude thinking block, once written: its signature, streamed with no text (as Letta's V2 does).
    signature: str | None = None


@dataclass(frozen=True)
class CompactionStarted:
    """Only with `include_compaction_messages`: the buffer was compacted in `step_id` (an event_message).

    Yielded once the summary is written, just before the MessagesCommitted that carries the summary row.
    """

    step_id: str
    trigger: str
    context_token_estimate: int | None
    context_window: int


@dataclass(frozen=True)
class RunFinished:
    stop_reason: str
    usage: dict[str, Any] = field(default_factory=dict)
    # The logprobs of the turn's last LLM call that returned some (letta_v1 loop, `return_logprobs`), for
    # a blocking send's `LettaResponse.logprobs`.
    logprobs: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunFailed:
    stop_reason: str
    error: Exception
    error_type: str
    usage: dict[str, Any] = field(default_factory=dict)


LoopEvent = MessagesCommitted | TokenDelta | CompactionStarted | RunFinished | RunFailed
