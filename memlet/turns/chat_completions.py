"""OpenAI-compatible chat completions on an agent (``POST /v1/chat/completions``), as Letta 0.16.8 serves them.

``model`` names the agent; only the last user message is sent, through the agent's default thread with token
streaming, and the reply comes back as OpenAI ``ChatCompletionChunk`` SSE: the first chunk carries
``delta.role: "assistant"``, assistant text follows as ``delta.content`` (tool calls, tool returns and reasoning are
hidden, text after tools is streamed), the last has ``delta: {}`` and ``finish_reason: "stop"``, then ``[DONE]``.

Better than Letta: a failed run ends with an OpenAI-style error chunk (``{"error": {...}}``) instead of a silent
``stop`` that looks like an empty but successful reply.
"""

import json
import time
from typing import Any

from pydantic import BaseModel

from memlet.errors import BadRequestError
from memlet.loop import events as ev
from memlet.messages.schemas import AssistantMessage
from memlet.turns.streaming import DONE, EventRenderer, ViewOptions, error_message, public_views

NOT_AN_AGENT = (
    "INVALID_ARGUMENT: For this endpoint, the 'model' field should contain an agent ID (format: 'agent-...'). "
    "Received: '{model}'"
)
NO_USER_MESSAGE = (
    "INVALID_ARGUMENT: No user message found in the request. Please include at least one message with role='user'."
)
NOT_STREAMED = "INVALID_ARGUMENT: Non-streaming chat completions not yet implemented. Please set stream=true."


class ChatCompletionRequest(BaseModel):
    """OpenAI's request body; the sampling fields are accepted and ignored (the agent's own config decides)."""

    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    top_p: float | None = None
    n: int | None = 1
    stream: bool | None = False
    stop: str | list[str] | None = None
    max_tokens: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    user: str | None = None


def agent_id_of(req: ChatCompletionRequest) -> str:
    """The agent named by ``model`` (Letta's 400 for anything that is not an agent id)."""
    if not req.model.startswith("agent-"):
        raise BadRequestError(NOT_AN_AGENT.format(model=req.model))
    return req.model


def last_user_content(req: ChatCompletionRequest) -> str | list[dict[str, Any]]:
    """The content of the last ``role: user`` message (a string or text parts); the rest is ignored, as in Letta,
    because the agent keeps its own history."""
    for message in reversed(req.messages):
        if message.get("role", "user") == "user":
            content = message.get("content", "")
            return content if isinstance(content, str | list) else str(content)
    raise BadRequestError(NO_USER_MESSAGE)


def ensure_streamed(req: ChatCompletionRequest) -> None:
    if not req.stream:
        raise BadRequestError(NOT_STREAMED)


class ChatChunkRenderer(EventRenderer):
    """Loop events → ``ChatCompletionChunk`` SSE lines of one run (``id`` ``chatcmpl-<run id>``)."""

    def __init__(self, run_id: str, opts: ViewOptions, model: str) -> None:
        super().__init__(run_id, opts)
        self.model = model
        self.created = int(time.time())
        self._role_sent = False

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        body = {
            "id": f"chatcmpl-{self.run_id}",
            "choices": [{"delta": delta, "finish_reason": finish_reason, "index": 0, "logprobs": None}],
            "created": self.created,
            "model": self.model,
            "object": "chat.completion.chunk",
            "service_tier": None,
            "system_fingerprint": None,
            "usage": None,
        }
        return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"

    def _render(self, event: ev.LoopEvent) -> list[str]:
        if isinstance(event, ev.TokenDelta):
            if event.kind != "assistant":
                return []
            self._streamed.add((event.message_id, "assistant_message"))
            return [self._chunk({"content": event.text})] if event.text else []
        if isinstance(event, ev.MessagesCommitted):
            chunks = []
            for view in public_views(event.messages, self.opts):
                if isinstance(view, AssistantMessage) and (view.id, view.message_type) not in self._streamed:
                    text = view.content if isinstance(view.content, str) else "".join(p.text for p in view.content)
                    chunks.append(self._chunk({"content": text}))
            return chunks
        if isinstance(event, ev.RunFinished):
            return [self._chunk({}, "stop"), DONE]
        if isinstance(event, ev.RunFailed):
            return self.failure(event.error, event.stop_reason, event.error_type)
        return []

    def failure(self, error: BaseException, reason: str = "error", error_type: str | None = None) -> list[str]:
        """An OpenAI-style error chunk, then ``[DONE]`` (Letta ended a failed run with a plain ``stop``)."""
        letta = error_message(self.run_id, error, error_type)
        body = {"error": {"message": letta.message, "type": letta.error_type, "code": reason, "detail": letta.detail}}
        return [f"data: {json.dumps(body, separators=(',', ':'))}\n\n", DONE]
