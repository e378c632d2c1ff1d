"""A deterministic OpenAI-compatible server for memlet's tests: chat completions (SSE or not), embeddings, models,
and Anthropic's messages API (`tests/mock_anthropic.py`) over the same script and recordings.

    mock = MockLLM.start()                      # uvicorn on 127.0.0.1:<ephemeral> in a background thread
    mock.script(Reply.tool_call("send_message", {"message": "hi"}), Reply.text("done"))
    ...  point an OpenAI client at mock.base_url ...
    mock.requests[-1]["tool_choice"]            # every chat request body, in arrival order
    mock.stop()

Each chat request consumes the next scripted reply. With nothing scripted the answer is the plain text
``DEFAULT_REPLY_TEXT`` ("OK"), whatever the request's tool_choice, so an unscripted test never hangs or loops on
tool calls. ``Reply.error(..., times=n)`` queues n identical failures. Embedding requests have their own queue
(``script_embeddings``) that only honours error and delay replies.

Embeddings are hashed bags of words: lowercase word tokens hashed with BLAKE2b (stable across processes) into
signed buckets, L2-normalised, so texts sharing words are close and unrelated texts are near-orthogonal.

Another process can script a standalone server (``python -m tests.mock_llm --port N``) over HTTP with
``POST /_mock/script {"replies": [...], "target": "chat"|"embeddings"}`` (see ``script_remote``),
``POST /_mock/reset`` and ``GET /_mock/requests``.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Self

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests import token_budget as budget

DEFAULT_REPLY_TEXT = "OK"
DEFAULT_EMBEDDING_DIM = 1536
# The native Ollama route answers with each model's own size.
OLLAMA_EMBEDDING_DIMS = {"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384}
MODEL_IDS = ("gpt-4o-mini", "gpt-4o", "mock-model", "text-embedding-3-small", "text-embedding-ada-002")
# Served at /_mock/image.png: a stand-in for an image a user message links to (the bytes are never decoded).
MOCK_IMAGE = b"\x89PNG\r\n\x1a\n" + b"mock-image-bytes"
CREATED = 1_700_000_000  # a fixed timestamp keeps responses byte-identical between runs


@dataclass(frozen=True)
class Call:
    """One scripted tool call; ``arguments`` may be a raw string to simulate malformed JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """What the mock answers to one request. Build it with the class methods, not the constructor."""

    kind: str = "message"  # message | error | delay
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[Call, ...] = ()
    finish_reason: str | None = None
    break_after: int | None = None  # streamed only: an SSE error event after this many content chunks
    status: int = 500
    message: str | None = None
    code: str | None = None
    retry_after: float | str | None = None
    times: int = 1
    seconds: float = 0.0
    then: "Reply | None" = None
    signature: str | None = None  # Anthropic: the thinking block's signature (default mock-signature-<n>)
    redacted: str | None = None  # Anthropic: a redacted_thinking block's data
    prompt_tokens: int | None = None  # the prompt tokens to report instead of the counted ones
    # Only for a request whose system message contains this text (concurrent agents, each told apart by its
    # persona); replies without it are taken in order by any request.
    match: str | None = None

    @classmethod
    def text(
        cls,
        content: str,
        *,
        reasoning: str | None = None,
        finish_reason: str = "stop",
        break_after: int | None = None,
        signature: str | None = None,
    ) -> Self:
        """A plain assistant message, optionally preceded by ``reasoning_content`` (DeepSeek style)."""
        return cls(
            content=content,
            reasoning=reasoning,
            finish_reason=finish_reason,
            break_after=break_after,
            signature=signature,
        )

    @classmethod
    def tool_call(
        cls,
        name: str,
        args: dict[str, Any] | str,
        id: str | None = None,
        *,
        content: str | None = None,
        reasoning: str | None = None,
        signature: str | None = None,
    ) -> Self:
        """One tool call; ids default to deterministic ``call_mock_<n>``."""
        return cls(content=content, reasoning=reasoning, calls=(Call(name, args, id),), signature=signature)

    @classmethod
    def tool_calls(cls, *calls: Call, content: str | None = None, reasoning: str | None = None) -> Self:
        """Several (parallel) tool calls in one assistant message."""
        return cls(content=content, reasoning=reasoning, calls=calls)

    @classmethod
    def error(
        cls,
        status: int = 500,
        retry_after: float | str | None = None,
        times: int = 1,
        message: str | None = None,
        code: str | None = None,
    ) -> Self:
        """An OpenAI-shaped error response, repeated for the next ``times`` requests."""
        return cls(kind="error", status=status, retry_after=retry_after, times=times, message=message, code=code)

    @classmethod
    def delay(cls, seconds: float, then: "Reply | None" = None) -> Self:
        """Wait before answering with ``then`` (default reply when None), e.g. to trigger client timeouts."""
        return cls(kind="delay", seconds=seconds, then=then)

    @classmethod
    def empty(cls) -> Self:
        """An assistant message with neither content nor tool calls."""
        return cls(finish_reason="stop")

    @classmethod
    def overflow(cls, times: int = 1, window: int = 4000, used: int = 5000) -> Self:
        """OpenAI's answer to a prompt larger than the model's window (a 400 ``context_length_exceeded``)."""
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages resulted in {used} "
            "tokens. Please reduce the length of the messages."
        )
        return cls.error(400, times=times, message=message, code="context_length_exceeded")

    def only_for(self, marker: str) -> Self:
        """This reply, kept for the next request whose system prompt contains ``marker`` (e.g. a persona word)."""
        return replace(self, match=marker)

    def reporting(self, prompt_tokens: int) -> Self:
        """This reply, with a usage that claims ``prompt_tokens`` for the prompt (a provider counting high)."""
        return replace(self, prompt_tokens=prompt_tokens)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Reply":
        data = dict(data)
        data["calls"] = tuple(Call(**c) for c in data.get("calls") or ())
        if data.get("then") is not None:
            data["then"] = cls.from_dict(data["then"])
        return cls(**data)


def hashed_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """The mock's embedding of ``text``: a signed hashed bag of words, L2-normalised."""
    vec = [0.0] * dim
    for token in re.findall(r"[a-z0-9]+", text.lower()):
        digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
        vec[digest % dim] += 1.0 if (digest >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:
        vec[0] = 1.0  # a zero vector has no cosine distance; give empty text a fixed direction
        return vec
    return [x / norm for x in vec]


def _tokens(text: str | None) -> int:
    return math.ceil(len(text) / 4) if text else 0


def _pieces(text: str, size: int = 0) -> list[str]:
    """Split text into streaming fragments: words with their leading space, or fixed-size slices."""
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return re.findall(r"\s*\S+\s*$|\s*\S+", text) or ([text] if text else [])


class _State:
    """Scripts and recordings, shared by the server thread and the test thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.chat_queue: deque[Reply] = deque()
            self.embedding_queue: deque[Reply] = deque()
            self.requests: list[dict[str, Any]] = []
            self.embedding_requests: list[dict[str, Any]] = []
            # The Authorization header of every request, in arrival order ("" when none was sent).
            self.authorizations: list[str] = []
            self.counter = 0
            self.cached_prompts: set[str] = set()  # system prompts marked cache_control (Anthropic)
            self.window: int | None = None  # when set, a chat request larger than this overflows (a 400)
            # Replies reserved for chat requests whose body contains a marker (script_when), checked first.
            self.routed: list[tuple[str, deque[Reply]]] = []

    def enqueue(self, replies: tuple[Reply, ...], target: str = "chat") -> None:
        queue = self.chat_queue if target == "chat" else self.embedding_queue
        with self.lock:
            for reply in replies:
                queue.extend([replace(reply, times=1)] * max(1, reply.times))

    def take(self, body: dict[str, Any], target: str) -> Reply:
        with self.lock:
            (self.requests if target == "chat" else self.embedding_requests).append(body)
            queue = self.chat_queue if target == "chat" else self.embedding_queue
            if target == "chat" and self.routed:
                seen = json.dumps(body)
                for marker, routed in self.routed:
                    if marker in seen:
                        queue = routed
                        break
            system = _system_text(body) if any(r.match for r in queue) else ""
            for reply in queue:
                if reply.match is None or reply.match in system:
                    queue.remove(reply)
                    return reply
            return Reply.text(DEFAULT_REPLY_TEXT)

    def enqueue_when(self, marker: str, replies: tuple[Reply, ...]) -> None:
        with self.lock:
            for known, routed in self.routed:
                if known == marker:
                    routed.extend(replies)
                    return
            self.routed.append((marker, deque(replies)))

    def next_number(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter


def _system_text(body: dict[str, Any]) -> str:
    """The first message's text of a chat request (the agent's system prompt; Anthropic's ``system`` field)."""
    if "system" in body:
        return json.dumps(body["system"])
    messages = body.get("messages") or [{}]
    return json.dumps(messages[0].get("content"))


def _error_response(reply: Reply) -> Response:
    kind = {429: "rate_limit_exceeded"}.get(
        reply.status, "server_error" if reply.status >= 500 else "invalid_request_error"
    )
    message = reply.message or f"Mock error {reply.status}"
    headers = {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else None
    body = {"error": {"message": message, "type": kind, "param": None, "code": reply.code}}
    return JSONResponse(body, status_code=reply.status, headers=headers)


async def _resolve(reply: Reply) -> Reply:
    while reply.kind == "delay":
        await asyncio.sleep(reply.seconds)
        reply = reply.then or Reply.text(DEFAULT_REPLY_TEXT)
    return reply


def usage_for(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The usage the mock reports for answering `body` with `reply` (tests compare it with what memlet stored):
    real cl100k_base counts, as a provider reports them (`tests.token_budget`), unless the reply says otherwise."""
    prompt = budget.prompt_tokens(body) if reply.prompt_tokens is None else reply.prompt_tokens
    reasoning = budget.text_tokens(reply.reasoning or "")
    calls = sum(budget.text_tokens(c.name + _args(c)) + 3 for c in reply.calls)
    completion = budget.text_tokens(reply.content or "") + reasoning + calls
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _args(call: Call) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


class _Chat:
    """Renders one resolved reply as a chat.completion or a stream of chat.completion.chunk events."""

    def __init__(self, state: _State, body: dict[str, Any], reply: Reply) -> None:
        number = state.next_number()
        calls = tuple(replace(c, id=c.id or f"call_mock_{number}_{i}") for i, c in enumerate(reply.calls))
        self.reply = replace(reply, calls=calls)
        self.body = body
        self.id = f"chatcmpl-mock-{number}"
        self.finish = reply.finish_reason or ("tool_calls" if calls else "stop")

    def _tool_call(self, index: int, call: Call) -> dict[str, Any]:
        return {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": _args(call)},
        }

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.content, "refusal": None}
        if self.reply.calls:
            message["tool_calls"] = [self._tool_call(i, c) for i, c in enumerate(self.reply.calls)]
            for call in message["tool_calls"]:
                del call["index"]
        if self.reply.reasoning is not None:
            message["reasoning_content"] = self.reply.reasoning
        choice = {"index": 0, "message": message, "finish_reason": self.finish, "logprobs": None}
        return self._envelope("chat.completion", choices=[choice], usage=usage_for(self.body, self.reply))

    def _envelope(self, obj: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": CREATED,
            "model": self.body.get("model", "mock-model"),
            "system_fingerprint": "fp_mock",
            **fields,
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _sse(self._envelope("chat.completion.chunk", choices=[choice]))

    async def stream(self) -> AsyncIterator[str]:
        reply = self.reply
        first: dict[str, Any] = {"role": "assistant"}
        if reply.content is not None or reply.calls:
            first["content"] = "" if reply.content is not None else None
        yield self._chunk(first)
        for piece in _pieces(reply.reasoning or ""):
            yield self._chunk({"reasoning_content": piece})
        for n, piece in enumerate(_pieces(reply.content or "")):
            if reply.break_after is not None and n >= reply.break_after:
                yield _sse({"error": {"message": "Mock stream interrupted", "type": "server_error"}})
                return
            yield self._chunk({"content": piece})
        for index, call in enumerate(reply.calls):
            head = self._tool_call(index, call)
            head["function"]["arguments"] = ""
            yield self._chunk({"tool_calls": [head]})
            for fragment in _pieces(_args(call), size=8):
                yield self._chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
        yield self._chunk({}, self.finish)
        if (self.body.get("stream_options") or {}).get("include_usage"):
            yield _sse(self._envelope("chat.completion.chunk", choices=[], usage=usage_for(self.body, reply)))
        yield "data: [DONE]\n\n"


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n"


def create_app(state: _State) -> Starlette:
    """The mock's ASGI app over ``state``."""

    from tests import mock_anthropic

    def anthropic_key(request: Request) -> str:
        # Anthropic takes the key as x-api-key or (newer SDKs) as a bearer token; recorded bare either way.
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        return request.headers.get("x-api-key") or bearer

    async def models(request: Request) -> Response:
        if "anthropic-version" in request.headers:
            state.authorizations.append(anthropic_key(request))
            return mock_anthropic.models_response()
        state.authorizations.append(request.headers.get("authorization", ""))
        data = [{"id": m, "object": "model", "created": CREATED, "owned_by": "mock"} for m in MODEL_IDS]
        return JSONResponse({"object": "list", "data": data})

    async def chat_completions(request: Request) -> Response:
        state.authorizations.append(request.headers.get("authorization", ""))
        body = await request.json()
        reply = await _resolve(state.take(body, "chat"))
        if state.window is not None and reply.kind != "error":
            used = budget.prompt_tokens(body) + (budget.completion_allowance(body) or 0)
            if used > state.window:
                reply = Reply.overflow(window=state.window, used=used)
        if reply.kind == "error":
            return _error_response(reply)
        chat = _Chat(state, body, reply)
        if body.get("stream"):
            return StreamingResponse(chat.stream(), media_type="text/event-stream")
        return JSONResponse(chat.completion())

    async def messages(request: Request) -> Response:
        state.authorizations.append(anthropic_key(request))
        body = await request.json()
        # Recorded with the API's name and the anthropic-beta header (when sent) beside the body.
        seen = {**body, "_api": "anthropic"} | (
            {"_beta": beta} if (beta := request.headers.get("anthropic-beta")) else {}
        )
        reply = await _resolve(state.take(seen, "chat"))
        if reply.kind == "error":
            return mock_anthropic.error_response(reply)
        number = state.next_number()
        with state.lock:  # the answer's usage reads and updates the cached prompts
            answer = mock_anthropic.AnthropicAnswer(number, body, reply, state.cached_prompts)
        if body.get("stream"):
            return StreamingResponse(answer.stream(), media_type="text/event-stream")
        return JSONResponse(answer.response())

    async def embeddings(request: Request) -> Response:
        body = await request.json()
        reply = await _resolve(state.take(body, "embeddings"))
        if reply.kind == "error":
            return _error_response(reply)
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        dim = int(body.get("dimensions") or DEFAULT_EMBEDDING_DIM)
        data = []
        for index, text in enumerate(texts):
            vector: Any = hashed_embedding(str(text), dim)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        used = sum(_tokens(str(t)) for t in texts)
        usage = {"prompt_tokens": used, "total_tokens": used}
        return JSONResponse({"object": "list", "data": data, "model": body.get("model"), "usage": usage})

    async def ollama_embed(request: Request) -> Response:
        # Ollama's native API: {"model", "input": str | [str]} -> {"model", "embeddings": [[...]]}; no `dimensions`.
        body = await request.json()
        reply = await _resolve(state.take({**body, "_api": "ollama"}, "embeddings"))
        if reply.kind == "error":
            return _error_response(reply)
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        dim = OLLAMA_EMBEDDING_DIMS.get(str(body.get("model")), DEFAULT_EMBEDDING_DIM)
        return JSONResponse({"model": body.get("model"), "embeddings": [hashed_embedding(str(t), dim) for t in texts]})

    async def script(request: Request) -> Response:
        payload = await request.json()
        replies = tuple(Reply.from_dict(r) for r in payload.get("replies", []))
        state.enqueue(replies, payload.get("target", "chat"))
        return JSONResponse({"queued": len(replies)})

    async def reset(request: Request) -> Response:
        state.reset()
        return JSONResponse({"ok": True})

    async def image(request: Request) -> Response:
        return Response(MOCK_IMAGE, media_type="image/png")

    async def recorded(request: Request) -> Response:
        with state.lock:
            return JSONResponse({"chat": state.requests, "embeddings": state.embedding_requests})

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/api/embed", ollama_embed, methods=["POST"]),
            Route("/_mock/script", script, methods=["POST"]),
            Route("/_mock/reset", reset, methods=["POST"]),
            Route("/_mock/requests", recorded, methods=["GET"]),
            Route("/_mock/image.png", image, methods=["GET"]),
        ]
    )


class MockLLM:
    """A running mock server plus its scripting API (same process)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._state = _State()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, port: int = 0) -> Self:
        """Serve in a daemon thread on 127.0.0.1 (an ephemeral port unless given) and wait until it listens."""
        mock = cls(port=port)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((mock.host, port))
        mock.port = sock.getsockname()[1]
        mock._server = uvicorn.Server(mock._config())
        mock._thread = threading.Thread(target=mock._server.run, kwargs={"sockets": [sock]}, daemon=True)
        mock._thread.start()
        deadline = time.monotonic() + 10
        while not mock._server.started:
            if time.monotonic() > deadline or not mock._thread.is_alive():
                raise RuntimeError("mock LLM server did not start")
            time.sleep(0.01)
        return mock

    def _config(self) -> uvicorn.Config:
        # Short graceful shutdown: a handler still sleeping in Reply.delay must not hold up stop().
        return uvicorn.Config(
            create_app(self._state),
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            ws="none",
            timeout_graceful_shutdown=1,
        )

    def serve_forever(self) -> None:
        """Run in the foreground (the standalone ``python -m tests.mock_llm`` mode)."""
        uvicorn.Server(self._config()).run()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat completion requests, in order."""
        self._state.enqueue(replies, "chat")

    def script_when(self, marker: str, *replies: Reply) -> None:
        """Queue replies for the chat requests whose JSON body contains `marker` (e.g. one agent's prompt), in
        order; such a request answers from this queue only (the default reply once it is empty)."""
        self._state.enqueue_when(marker, replies)

    def script_embeddings(self, *replies: Reply) -> None:
        """Queue error/delay replies for the next embedding requests."""
        self._state.enqueue(replies, "embeddings")

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat completion request body received so far."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of every models / chat request so far ("" when none was sent)."""
        with self._state.lock:
            return list(self._state.authorizations)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        with self._state.lock:
            return list(self._state.embedding_requests)

    def reset(self) -> None:
        """Forget scripts and recorded requests (and the enforced window)."""
        self._state.reset()

    def enforce_window(self, tokens: int | None) -> None:
        """Answer every chat request whose prompt plus completion limit exceeds ``tokens`` with an overflow."""
        self._state.window = tokens


def script_remote(base_url: str, *replies: Reply, target: str = "chat") -> None:
    """Script a mock running in another process; ``base_url`` is its ``http://host:port/v1``."""
    root = base_url.removesuffix("/").removesuffix("/v1")
    payload = {"replies": [r.to_dict() for r in replies], "target": target}
    httpx.post(f"{root}/_mock/script", json=payload, timeout=5).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description="Run memlet's mock OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8999)
    args = parser.parse_args()
    print(f"mock LLM listening on http://{args.host}:{args.port}/v1", flush=True)
    MockLLM(args.host, args.port).serve_forever()


if __name__ == "__main__":
    main()
