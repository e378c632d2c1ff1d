"""The mock's HTTP routes (a Starlette app over one ``MockState``): OpenAI chat completions and responses,
Anthropic messages and token counts, both model lists, OpenAI and Ollama embeddings, the web tools' page and fake Exa API (``web``), and the
``/_mock/*`` control routes another process scripts."""

from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests import token_budget as budget
from tests.mock_llm import anthropic_wire, embeddings, logprobs, openai_wire, responses_wire, web
from tests.mock_llm.replies import Reply, resolve
from tests.mock_llm.state import MockState

# Served at /_mock/image.png: a stand-in for an image a user message links to (the bytes are never decoded).
MOCK_IMAGE = b"\x89PNG\r\n\x1a\n" + b"mock-image-bytes"


def _anthropic_key(request: Request) -> str:
    # Anthropic takes the key as x-api-key or (newer SDKs) as a bearer token; recorded bare either way.
    bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
    return request.headers.get("x-api-key") or bearer


def _raw(reply: Reply) -> Response:
    async def pieces() -> AsyncIterator[str]:
        for piece in reply.body:
            yield piece
        if reply.cut:  # the server aborts the connection: the client never sees the response's end
            raise ConnectionAbortedError("mock: connection dropped mid-response")

    return StreamingResponse(pieces(), status_code=reply.status, media_type=reply.content_type)


def create_app(state: MockState) -> Starlette:
    """The mock's ASGI app over ``state``."""

    async def models(request: Request) -> Response:
        if "anthropic-version" in request.headers:
            state.authorizations.append(_anthropic_key(request))
            return anthropic_wire.models_response()
        state.authorizations.append(request.headers.get("authorization", ""))
        return openai_wire.models_response()

    async def chat_completions(request: Request) -> Response:
        state.authorizations.append(request.headers.get("authorization", ""))
        state.chat_headers.append(dict(request.headers))
        body = await request.json()
        reply = await resolve(state.take(body, "chat"))
        if reply.kind == "raw":
            return _raw(reply)
        if reply.kind != "error" and (refused := logprobs.refusal(body)) is not None:
            reply = refused
        if state.window is not None and reply.kind != "error":
            used = budget.prompt_tokens(body) + (budget.completion_allowance(body) or 0)
            if used > state.window:
                reply = Reply.overflow(window=state.window, used=used)
        if reply.kind == "error":
            return openai_wire.error_response(reply)
        chat = openai_wire.ChatAnswer(state.next_number(), body, reply)
        if chat.logprobs is not None:
            with state.lock:
                state.sent_logprobs.append(chat.logprobs)
        if body.get("stream"):
            return StreamingResponse(chat.stream(), media_type="text/event-stream")
        return JSONResponse(chat.completion())

    async def responses(request: Request) -> Response:
        # OpenAI's Responses API: recorded among the chat requests, marked with the API's name.
        state.authorizations.append(request.headers.get("authorization", ""))
        body = await request.json()
        reply = await resolve(state.take({**body, "_api": "responses"}, "chat"))
        if reply.kind == "raw":
            return _raw(reply)
        if reply.kind == "error":
            return openai_wire.error_response(reply)
        answer = responses_wire.ResponsesAnswer(state.next_number(), body, reply)
        if body.get("stream"):
            return StreamingResponse(answer.stream(), media_type="text/event-stream")
        return JSONResponse(answer.response())

    async def messages(request: Request) -> Response:
        state.authorizations.append(_anthropic_key(request))
        body = await request.json()
        # Recorded with the API's name and the anthropic-beta header (when sent) beside the body.
        seen = {**body, "_api": "anthropic"} | (
            {"_beta": beta} if (beta := request.headers.get("anthropic-beta")) else {}
        )
        reply = await resolve(state.take(seen, "chat"))
        if reply.kind == "raw":
            return _raw(reply)
        if reply.kind == "error":
            return anthropic_wire.error_response(reply)
        number = state.next_number()
        with state.lock:  # the answer's usage reads and updates the cached prompts
            answer = anthropic_wire.AnthropicAnswer(number, body, reply, state.cached_prompts)
        if body.get("stream"):
            return StreamingResponse(answer.stream(), media_type="text/event-stream")
        return JSONResponse(answer.response())

    async def count_tokens(request: Request) -> Response:
        # Recorded among the chat requests (as "count_tokens"); a scripted error reply answers it (a 401: a bad key).
        state.authorizations.append(_anthropic_key(request))
        body = await request.json()
        reply = await resolve(state.take({**body, "_api": "count_tokens"}, "chat"))
        if reply.kind == "error":
            return anthropic_wire.error_response(reply)
        return JSONResponse({"input_tokens": budget.prompt_tokens(body) if body.get("messages") else 0})

    async def embed(body: Any, recorded: dict[str, Any], render: Callable[[Any], dict[str, Any]]) -> Response:
        reply = await resolve(state.take(recorded, "embeddings"))
        if reply.kind == "raw":
            return _raw(reply)
        if reply.kind == "error":
            return openai_wire.error_response(reply)
        return JSONResponse(render(body))

    async def openai_embeddings(request: Request) -> Response:
        state.embedding_authorizations.append(request.headers.get("authorization", ""))
        body = await request.json()
        return await embed(body, body, embeddings.openai_body)

    async def ollama_embed(request: Request) -> Response:
        body = await request.json()
        return await embed(body, {**body, "_api": "ollama"}, embeddings.ollama_body)

    async def script(request: Request) -> Response:
        payload = await request.json()
        replies = tuple(Reply.from_dict(r) for r in payload.get("replies", []))
        state.enqueue(replies, payload.get("target", "chat"), payload.get("when"))
        return JSONResponse({"queued": len(replies)})

    async def reset(request: Request) -> Response:
        state.reset()
        return JSONResponse({"ok": True})

    async def image(request: Request) -> Response:
        return Response(MOCK_IMAGE, media_type="image/png")

    async def recorded(request: Request) -> Response:
        with state.lock:
            return JSONResponse(
                {"chat": state.requests, "embeddings": state.embedding_requests, "exa": state.exa_requests}
            )

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/embeddings", openai_embeddings, methods=["POST"]),
            Route("/api/embed", ollama_embed, methods=["POST"]),
            Route("/_mock/script", script, methods=["POST"]),
            Route("/_mock/reset", reset, methods=["POST"]),
            Route("/_mock/requests", recorded, methods=["GET"]),
            Route("/_mock/image.png", image, methods=["GET"]),
            *web.routes(state),
        ]
    )
