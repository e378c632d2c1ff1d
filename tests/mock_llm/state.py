"""The mock's scripts and recordings, shared by the server thread and the test thread.

Chat replies wait in queues. The general queue answers any request, in order. A routed queue
(``MockLLM.script_when(marker, ...)``) answers, in order, every chat request whose system prompt (an OpenAI
request's first message, Anthropic's ``system``) contains its marker — such a request answers from that queue
only, with the default reply once it is empty, so concurrent agents told apart by their persona each get their
own script. Markers are tried in the order they were first scripted. Embedding requests have their own queue.
"""

import json
import threading
from collections import deque
from dataclasses import replace
from typing import Any

from tests.mock_llm.logprobs import AnswerLogprobs
from tests.mock_llm.replies import DEFAULT_REPLY_TEXT, Reply


class MockState:
    """Queues, routing and recordings behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.chat_queue: deque[Reply] = deque()
            self.embedding_queue: deque[Reply] = deque()
            # Replies reserved for chat requests whose system prompt contains a marker, checked first.
            self.routed: dict[str, deque[Reply]] = {}
            self.requests: list[dict[str, Any]] = []
            self.embedding_requests: list[dict[str, Any]] = []
            # Every request to the fake Exa API: {"endpoint", "x-api-key", "body"} (`web`).
            self.exa_requests: list[dict[str, Any]] = []
            # The Authorization header of every request, in arrival order ("" when none was sent).
            self.authorizations: list[str] = []
            self.embedding_authorizations: list[str] = []  # the same, for OpenAI-style embedding requests
            self.chat_headers: list[dict[str, str]] = []  # every chat completions request's headers
            self.counter = 0
            self.cached_prompts: set[str] = set()  # system prompts marked cache_control (Anthropic)
            self.window: int | None = None  # when set, a chat request larger than this overflows (a 400)
            # The tokens of each OpenAI-style answer to a request that asked for logprobs, in answer order.
            self.sent_logprobs: list[AnswerLogprobs] = []

    def enqueue(self, replies: tuple[Reply, ...], target: str = "chat", when: str | None = None) -> None:
        """Queue ``replies`` (each ``times`` over) for ``target``; for chat, only for requests marked ``when``
        when given (the marker's queue exists from then on, even with no replies)."""
        with self.lock:
            if target != "chat":
                queue = self.embedding_queue
            elif when is None:
                queue = self.chat_queue
            else:
                queue = self.routed.setdefault(when, deque())
            for reply in replies:
                queue.extend([replace(reply, times=1)] * max(1, reply.times))

    def take(self, body: dict[str, Any], target: str) -> Reply:
        """Record ``body`` and hand out the reply it is due (the default text when its queue is empty)."""
        with self.lock:
            (self.requests if target == "chat" else self.embedding_requests).append(body)
            queue = self.chat_queue if target == "chat" else self.embedding_queue
            if target == "chat" and self.routed:
                system = system_text(body)
                queue = next((q for marker, q in self.routed.items() if marker in system), queue)
            return queue.popleft() if queue else Reply.text(DEFAULT_REPLY_TEXT)

    def next_number(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter


def system_text(body: dict[str, Any]) -> str:
    """The first message's text of a chat request (the agent's system prompt; Anthropic's ``system`` field)."""
    if "system" in body:
        return json.dumps(body["system"])
    if "input" in body:  # OpenAI's Responses API: the first input item is the developer message
        return json.dumps((body["input"] or [{}])[0].get("content"))
    messages = body.get("messages") or [{}]
    return json.dumps(messages[0].get("content"))
