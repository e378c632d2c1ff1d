"""Build one LLM request from the loaded state and call the model, forwarding token deltas when streaming."""

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memlet.db import models as orm
from memlet.db.sql import storable_text
from memlet.llm.chat_format import HEARTBEAT_PARAM, THINKING_PARAM, is_v2
from memlet.llm.client import LLMClient
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.types import (
    ChatRequest,
    ChatResult,
    ContentDelta,
    HiddenReasoningDelta,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from memlet.loop.agent_state import LoopState
from memlet.loop.buffer_chat import BufferChat
from memlet.loop.chat_request import build_chat_request, request_tools
from memlet.loop.events import DeltaKind, TokenDelta
from memlet.loop.response import previous_message_id
from memlet.loop.stream_args import ArgumentSplitter
from memlet.loop.usage_estimate import with_counted_prompt
from memlet.messages.views import otid_from_id
from memlet.prompt.skills import with_skills

# V2 replies to the user through this tool; its argument streams as assistant text.
ASSISTANT_TOOL = "send_message"
ASSISTANT_KWARG = "message"

__all__ = [
    "DeltaLabels",
    "build_chat_request",
    "call_llm",
    "request_system_text",
    "request_tools",
    "stored_system_text",
]


class DeltaLabels:
    """Ids for streamed fragments, so they equal the ids of the rows the step commits (and their views' otids).

    As in Letta, one response is one assistant row: its public parts (reasoning, text, tool calls) get the otids
    `otid_from_id(assistant_id, i)`, where i moves on each time the kind of fragment changes; in the stored
    row the parts come in the same order, so `views.to_letta_messages` numbers them alike. V2 agents are
    labelled by `_V2Labels`. Approval-gated calls belong to the approval row: its id, the assistant id minus one
    whatever else the response holds (`response.approval_request`), is also their otid, as Letta streams them.
    """

    def __init__(
        self,
        assistant_id: str,
        *,
        v2: bool,
        gated: Callable[[str], bool],
        thoughts_in_content: bool = False,
        step_id: str | None = None,
        use_assistant_message: bool = True,
    ) -> None:
        self.assistant_id = assistant_id
        # V2: `send_message`'s `message` streams as assistant text (off: the call streams as any other call).
        self.use_assistant_message = use_assistant_message
        self.step_id = step_id
        self.gated = gated
        # A V2 model not asked for `thinking` as an argument thinks in its content (stored as the thinking part).
        self.thoughts_in_content = thoughts_in_content
        self._v2 = _V2Labels(self) if v2 else None
        self._kind: str | None = None
        self._index = 0
        self._approval_calls: dict[str, str] = {}  # tool call id -> approval row id

    def delta(
        self,
        kind: DeltaKind,
        message_id: str,
        otid: str,
        *,
        text: str = "",
        tool_call_id: str | None = None,
        name: str | None = None,
        arguments: str | None = None,
        native: bool = False,
    ) -> TokenDelta:
        """A fragment of this step: each carries the step's id, as Letta's do."""
        return TokenDelta(kind, message_id, otid, text, tool_call_id, name, arguments, self.step_id, native)

    def _part(self, kind: str) -> str:
        if self._kind is not None and self._kind != kind:
            self._index += 1
        self._kind = kind
        return otid_from_id(self.assistant_id, self._index)

    def reasoning(self, event: ReasoningDelta) -> TokenDelta | None:
        """A fragment of the model's own reasoning. Of a Claude thinking block, a V2 agent streams every fragment,
        its signature too (an empty fragment carrying it, as Letta's V2 stream does); a letta_v1 agent streams
        neither the signature nor a whitespace-only fragment, as Letta's letta_v1 stream leaves them out (the
        stored thinking keeps its whitespace: its signature covers the text as written)."""
        if self._v2 is not None:
            self._v2.native_seen = True
            otid = otid_from_id(self.assistant_id, 0)
            fragment = self.delta("reasoning", self.assistant_id, otid, text=event.text, native=True)
            return replace(fragment, signature=event.signature) if event.signature is not None else fragment
        if event.thinking_block and not event.text.strip():
            return None
        return self.delta("reasoning", self.assistant_id, self._part("reasoning"), text=event.text, native=True)

    def hidden_reasoning(self, data: str) -> TokenDelta | None:
        """Redacted thinking, shown whole as it starts (V2: after the step, from the stored row)."""
        if self._v2 is not None:
            return None
        return self.delta("hidden_reasoning", self.assistant_id, self._part("hidden_reasoning"), text=data)

    def content(self, text: str) -> TokenDelta | None:
        if self._v2 is not None:
            if not self.thoughts_in_content or not text:
                return None  # V2 agents do not store plain content, so it is not shown
            return self._v2.content_thought(text)
        return self.delta("assistant", self.assistant_id, self._part("assistant"), text=text)

    def approval_id(self, delta: ToolCallDelta) -> str | None:
        """The approval row a call belongs to, or None when it runs without approval."""
        approval_id = self._approval_calls.get(delta.id)
        if approval_id is None and delta.name is not None and self.gated(delta.name):
            approval_id = previous_message_id(self.assistant_id)
            self._approval_calls[delta.id] = approval_id
        return approval_id

    def tool_call(self, delta: ToolCallDelta) -> list[TokenDelta]:
        """The fragments one provider tool-call delta yields (V2: possibly none, or several)."""
        if self._v2 is not None:
            return self._v2.tool_call(delta)
        approval_id = self.approval_id(delta)
        arguments = delta.arguments or None
        if approval_id is not None:
            return [
                self.delta(
                    "approval", approval_id, approval_id, tool_call_id=delta.id, name=delta.name, arguments=arguments
                )
            ]
        otid = self._part("tool_call")
        return [
            self.delta(
                "tool_call", self.assistant_id, otid, tool_call_id=delta.id, name=delta.name, arguments=arguments
            )
        ]


@dataclass
class _V2Call:
    id: str
    name: str
    approval_id: str | None
    splitter: ArgumentSplitter
    view: int | None  # index of its view among the row's tool-call views (None: on the approval row)
    as_assistant: bool = False  # a send_message shown as assistant text: its other arguments are not streamed
    head_sent: bool = False


class _V2Labels:
    """Fragments of a V2 response, parsed out of the streamed arguments as Letta does.

    The `thinking` argument streams as reasoning (the stored row keeps it as a text part after any native
    reasoning); `send_message`'s `message` streams as assistant text (unless the request turned
    `use_assistant_message` off, as Letta's streaming interface does); other calls stream as tool-call fragments
    whose arguments leave `thinking` out (and, for approval requests, `request_heartbeat`, as they are stored).
    Only the first call carrying `thinking` gives it up, as in `step.handle_response`. Known gaps: a call
    streamed before its `thinking` ended is numbered as if that thinking will be non-empty (models are told to
    think first, and the schema lists `thinking` first); a non-string `thinking` is streamed as an argument.
    """

    def __init__(self, labels: DeltaLabels) -> None:
        self.labels = labels
        self.native_seen = False
        self._calls: dict[str, _V2Call] = {}
        self._thinking_taken = False  # some call's arguments had the thinking member
        self._thinking: str | None = None  # its value once complete
        self._views_done = 0  # tool-call views already closed, as `views._tool_call_views` counts them
        self._group_open = False  # plain calls waiting to be shown as one tool_call_message

    def content_thought(self, text: str) -> TokenDelta:
        """Content streamed by a model that thinks in its content: the row's thinking part."""
        self._thinking_taken = True
        assistant_id = self.labels.assistant_id
        return self.labels.delta(
            "reasoning", assistant_id, otid_from_id(assistant_id, self._thinking_index()), text=text
        )

    def _thinking_index(self) -> int:
        return 1 if self.native_seen else 0

    def _call_index(self, view: int) -> int:
        thinking_part = self._thinking is None or self._thinking != ""
        return self._thinking_index() + int(thinking_part) + view

    def _register(self, delta: ToolCallDelta) -> _V2Call:
        name = delta.name or ""
        approval_id = self.labels.approval_id(delta)
        fields = set() if self._thinking_taken else {THINKING_PARAM}
        view: int | None = None
        as_assistant = approval_id is None and name == ASSISTANT_TOOL and self.labels.use_assistant_message
        if approval_id is None:
            view = self._views_done
            if as_assistant:
                fields.add(ASSISTANT_KWARG)
                self._views_done += 2 if self._group_open else 1
                self._group_open = False
            else:
                self._group_open = True
        # An approval request stores its arguments without the loop's own request_heartbeat.
        drop = {HEARTBEAT_PARAM} if approval_id is not None else set()
        call = _V2Call(delta.id, name, approval_id, ArgumentSplitter(fields, drop), view, as_assistant)
        self._calls[delta.id] = call
        return call

    def tool_call(self, delta: ToolCallDelta) -> list[TokenDelta]:
        call = self._calls.get(delta.id) or self._register(delta)
        out: list[TokenDelta] = []
        assistant_id = self.labels.assistant_id
        for piece in call.splitter.feed(delta.arguments):
            if piece.field == THINKING_PARAM:
                self._thinking_taken = True
                otid = otid_from_id(assistant_id, self._thinking_index())
                out.append(self.labels.delta("reasoning", assistant_id, otid, text=piece.text))
            elif piece.field == ASSISTANT_KWARG and call.view is not None:
                otid = otid_from_id(assistant_id, self._call_index(call.view))
                out.append(self.labels.delta("assistant", assistant_id, otid, text=piece.text))
            elif piece.field is None and not call.as_assistant:
                out.extend(self._call_fragments(call, piece.text, delta.name))
        if THINKING_PARAM in call.splitter.completed:
            self._thinking_taken = True
            self._thinking = call.splitter.completed[THINKING_PARAM]
        elif call.splitter.open_field == THINKING_PARAM:
            self._thinking_taken = True
        return out

    def _call_fragments(self, call: _V2Call, arguments: str, name: str | None = None) -> list[TokenDelta]:
        """The head of the call (its name) once, then an arguments fragment, named when the provider's delta was
        (Anthropic's every one, as Letta's V2 stream names them)."""
        if call.approval_id is not None:
            kind: DeltaKind = "approval"
            message_id = otid = call.approval_id
        else:
            kind, message_id = "tool_call", self.labels.assistant_id
            otid = otid_from_id(message_id, self._call_index(call.view or 0))
        out: list[TokenDelta] = []
        if not call.head_sent:
            call.head_sent = True
            out.append(self.labels.delta(kind, message_id, otid, tool_call_id=call.id, name=call.name))
        out.append(self.labels.delta(kind, message_id, otid, tool_call_id=call.id, name=name, arguments=arguments))
        return out


def stored_system_text(state: LoopState) -> str:
    """The text of the agent's stored system message (the loop sends it as is, to keep the prompt cache)."""
    return "".join(p.get("text", "") for p in (state.messages[0].content or []) if p.get("type") == "text")


def request_system_text(
    state: LoopState, override: str | None, client_skills: Sequence[dict[str, Any]], stored: str | None = None
) -> str:
    """The system prompt one request sends: the request's `override_system` exactly as given (Letta adds no skills
    to it), else the stored system message (`stored`: the one the turn started with) with the client's skills
    listed."""
    if override is not None:
        return override
    return with_skills(stored if stored is not None else stored_system_text(state), state.blocks, client_skills)


async def call_llm(
    llm: LLMClient,
    state: LoopState,
    system_text: str,
    pending: Sequence[orm.Message],
    tools: list[dict[str, Any]],
    tool_choice: str | dict[str, Any] | None,
    stream_tokens: bool,
    labels: DeltaLabels,
    result_box: list[ChatResult],
    chat: BufferChat | None = None,
    *,
    user: str | None = None,
    sent: list[bytes | dict[str, Any]] | None = None,
) -> AsyncIterator[TokenDelta]:
    """Call the model; with `stream_tokens` yield its fragments labelled by `labels`.

    A streamed response with neither text nor tool calls is an empty result here (the V3 loop then ends the
    turn without storing anything, as Letta's streaming path does); unstreamed, the client's
    LLMEmptyResponseError propagates (Letta's OpenAI client raises it too: invalid_llm_response). `sent`
    receives the body the client posted, once it has an answer (the step's provider trace).
    """
    request = build_chat_request(state, system_text, pending, tools, tool_choice, chat, user=user)
    config = state.agent.llm_config or {}
    if not stream_tokens:
        try:  # the client then builds no per-chunk events
            result_box.append(_storable(with_counted_prompt(await llm.chat(request), request, config)))
        finally:
            _record_sent(request, sent)  # a failed call's too: Letta traces it with the error
        return
    strict = _empty_stream_is_an_error(state.agent)
    try:
        async for event in llm.stream_chat(request):
            if isinstance(event, ChatResult):
                if strict and event.content is None and not event.tool_calls:
                    raise LLMEmptyResponseError(
                        f"INTERNAL_SERVER_ERROR: LLM provider returned empty content in streaming response "
                        f"(model: {event.model}, message_id: {event.response_id})"
                    )
                result_box.append(_storable(with_counted_prompt(event, request, config)))
                _record_sent(request, sent)
            elif isinstance(event, ReasoningDelta):
                if (reasoning := labels.reasoning(event)) is not None:
                    yield reasoning
            elif isinstance(event, HiddenReasoningDelta):
                if (hidden := labels.hidden_reasoning(event.data)) is not None:
                    yield hidden
            elif isinstance(event, ContentDelta):
                delta = labels.content(event.text)
                if delta is not None:
                    yield delta
            elif isinstance(event, ToolCallDelta):
                for delta in labels.tool_call(event):
                    yield delta
    except LLMEmptyResponseError as exc:
        if strict or _NO_CONTENT_STREAMED not in str(exc.detail or exc):
            raise
        result_box.append(ChatResult(content=None, tool_calls=[], finish_reason="stop", usage=Usage()))


_NO_CONTENT_STREAMED = "streamed no content and no tool calls"


def _record_sent(request: ChatRequest, sent: list[bytes | dict[str, Any]] | None) -> None:
    if sent is not None and request.sent is not None:
        sent.append(request.sent)


def _empty_stream_is_an_error(agent: orm.Agent) -> bool:
    """Letta's V2 loop reads an Anthropic token stream with its own interface, which fails a stream with neither
    text nor a tool call (thinking alone included) as an empty response; its letta_v1 loop and its OpenAI-style
    streams end such a turn quietly instead."""
    return is_v2(agent.agent_type) and (agent.llm_config or {}).get("model_endpoint_type") in ("anthropic", "minimax")


def _storable(result: ChatResult) -> ChatResult:
    """The reply without what Postgres and UTF-8 cannot hold (a model may send a NUL or a lone surrogate): its
    text becomes the rows and the response, which would otherwise fail to commit or to render."""
    content = storable_text(result.content) if result.content else result.content
    reasoning = storable_text(result.reasoning) if result.reasoning else result.reasoning
    calls = [
        ToolCall(storable_text(c.id), storable_text(c.name), storable_text(c.arguments)) for c in result.tool_calls
    ]
    result = replace(result, content=content, reasoning=reasoning, tool_calls=calls)
    if not result.summarized:
        return result
    summarized = tuple(replace(r, summary=tuple(map(storable_text, r.summary))) for r in result.summarized)
    return replace(result, summarized=summarized)
