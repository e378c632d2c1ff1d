"""OpenAI-compatible chat completions on an agent (``POST /v1/chat/completions``), after Letta 0.16.8.

``model`` names the agent; only the last user message is sent, through the agent's default thread, and the reply
comes back in OpenAI's shapes. Streamed (``stream: true``): ``ChatCompletionChunk`` SSE, the first chunk with
``delta.role: "assistant"``, assistant text as ``delta.content`` (tool calls, tool returns and reasoning are hidden,
text after tools is streamed), the last with ``delta: {}`` and ``finish_reason: "stop"``, then ``[DONE]``.

Better than Letta:
- ``stream: false`` answers one ``ChatCompletion`` with the run's usage (Letta: 400 "not yet implemented").
- ``stream_options.include_usage`` adds OpenAI's final usage chunk (``choices: []``) before ``[DONE]``.
- A failed run ends with an OpenAI-style error chunk (``{"error": {...}}``) instead of a silent ``stop`` that
  looks like an empty but successful reply.

The deprecated voice route (``/v1/voice-beta/{agent_id}/chat/completions``) takes a loose OpenAI body
(``voice_request``) and always streams the same chunks.
"""

import json
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from memlet.errors import BadRequestError
from memlet.loop import events as ev
from memlet.messages.error_events import error_message
from memlet.messages.requests import MessageCreate
from memlet.messages.schemas import AssistantMessage, StoredMessage
from memlet.turns.streaming import DONE, EventRenderer, ViewOptions, public_views, usage_of

NOT_AN_AGENT = (
    "INVALID_ARGUMENT: For this endpoint, the 'model' field should contain an agent ID (format: 'agent-...'). "
    "Received: '{model}'"
)
NO_USER_MESSAGE = (
    "INVALID_ARGUMENT: No user message found in the request. Please include at least one message with role='user'."
)
NO_MESSAGES = "The 'messages' field is missing in the request."
BAD_MESSAGES = "The 'messages' field must be a list of message objects."
BAD_CONTENT = "INVALID_ARGUMENT: The last user message's content must be a string or a list of content parts."


class ChatStreamOptions(BaseModel):
    include_usage: bool | None = None


class ChatCompletionRequest(BaseModel):
    """OpenAI's request body; the sampling fields are checked against OpenAI's (and Letta's) bounds, then ignored
    (the agent's own config decides)."""

    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: int | None = Field(default=1, ge=1)
    stream: bool | None = False
    stream_options: ChatStreamOptions | None = None
    stop: str | list[str] | None = None
    max_tokens: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    user: str | None = None

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


def agent_id_of(req: ChatCompletionRequest) -> str:
    """The agent named by ``model`` (Letta's 400 for anything that is not an agent id)."""
    if not req.model.startswith("agent-"):
        raise BadRequestError(NOT_AN_AGENT.format(model=req.model))
    return req.model


def voice_request(agent_id: str, body: dict[str, Any]) -> ChatCompletionRequest:
    """A voice route's body (any OpenAI-style dict, extra keys ignored: voice providers send their own) as a
    streamed request to the agent of the path."""
    messages = body.get("messages")
    if messages is None:
        raise BadRequestError(NO_MESSAGES)
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise BadRequestError(BAD_MESSAGES)
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    return ChatCompletionRequest(
        model=agent_id, messages=messages, stream=True, stream_options=ChatStreamOptions(include_usage=include_usage)
    )


def user_message(req: ChatCompletionRequest) -> MessageCreate:
    """The last ``role: user`` message (its content a string or text parts); the rest is ignored, as in Letta,
    because the agent keeps its own history."""
    for message in reversed(req.messages):
        if message.get("role", "user") == "user":
            try:
                return MessageCreate(role="user", content=message.get("content", ""))
            except ValidationError:
                raise BadRequestError(BAD_CONTENT) from None
    raise BadRequestError(NO_USER_MESSAGE)


def assistant_texts(rows: Sequence[StoredMessage], opts: ViewOptions, skip: set[tuple[str, str]]) -> list[str]:
    """The text of each assistant message among committed rows, except those already streamed (``skip``)."""
    texts = []
    for view in public_views(rows, opts):
        if isinstance(view, AssistantMessage) and (view.id, view.message_type) not in skip:
            texts.append(view.content if isinstance(view.content, str) else "".join(p.text for p in view.content))
    return texts


def completion_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The run's token totals as OpenAI's ``CompletionUsage``."""
    stats = usage_of(usage)
    body: dict[str, Any] = {
        "completion_tokens": stats.completion_tokens,
        "prompt_tokens": stats.prompt_tokens,
        "total_tokens": stats.total_tokens,
    }
    if stats.cached_input_tokens is not None:
        body["prompt_tokens_details"] = {"cached_tokens": stats.cached_input_tokens}
    if stats.reasoning_tokens is not None:
        body["completion_tokens_details"] = {"reasoning_tokens": stats.reasoning_tokens}
    return body


def envelope(run_id: str, model: str, created: int, obj: str, **fields: Any) -> dict[str, Any]:
    """The fields every completion and chunk of one run share (Letta includes the null ones)."""
    return {
        "id": f"chatcmpl-{run_id}",
        "created": created,
        "model": model,
        "object": obj,
        "service_tier": None,
        "system_fingerprint": None,
        "usage": None,
        **fields,
    }


def chat_completion(run_id: str, model: str, text: str, usage: dict[str, Any]) -> dict[str, Any]:
    """A finished run as one ``ChatCompletion`` (``stream: false``)."""
    message = {"role": "assistant", "content": text, "refusal": None, "tool_calls": None}
    choice = {"finish_reason": "stop", "index": 0, "logprobs": None, "message": message}
    return envelope(run_id, model, int(time.time()), "chat.completion", choices=[choice], usage=completion_usage(usage))


def _data(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"


class ChatChunkRenderer(EventRenderer):
    """Loop events → ``ChatCompletionChunk`` SSE lines of one run (``id`` ``chatcmpl-<run id>``)."""

    def __init__(self, run_id: str, opts: ViewOptions, model: str, *, include_usage: bool = False) -> None:
        super().__init__(run_id, opts)
        self.model = model
        self.include_usage = include_usage
        self.created = int(time.time())
        self._role_sent = False

    def _envelope(self, **fields: Any) -> dict[str, Any]:
        return envelope(self.run_id, self.model, self.created, "chat.completion.chunk", **fields)

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        choice = {"delta": delta, "finish_reason": finish_reason, "index": 0, "logprobs": None}
        return _data(self._envelope(choices=[choice]))

    def _render(self, event: ev.LoopEvent) -> list[str]:
        if isinstance(event, ev.TokenDelta):
            if event.kind != "assistant":
                return []
            self._streamed.add((event.message_id, "assistant_message"))
            return [self._chunk({"content": event.text})] if event.text else []
        if isinstance(event, ev.MessagesCommitted):
            return [self._chunk({"content": t}) for t in assistant_texts(event.messages, self.opts, self._streamed)]
        if isinstance(event, ev.RunFinished):
            chunks = [self._chunk({}, "stop")]
            if self.include_usage:  # OpenAI's last chunk under stream_options.include_usage
                chunks.append(_data(self._envelope(choices=[], usage=completion_usage(event.usage))))
            return [*chunks, DONE]
        if isinstance(event, ev.RunFailed):
            return self.failure(event.error, event.stop_reason, event.error_type)
        return []

    def failure(self, error: BaseException, reason: str = "error", error_type: str | None = None) -> list[str]:
        """An OpenAI-style error chunk, then ``[DONE]`` (Letta ended a failed run with a plain ``stop``)."""
        letta = error_message(self.run_id, error, error_type)
        body = {"error": {"message": letta.message, "type": letta.error_type, "code": reason, "detail": letta.detail}}
        return [_data(body), DONE]
