"""The one pure-ASGI layer in front of the app: what every request pays before and after its handler.

In order, as the five middlewares it replaces were stacked (outermost first): the request id (the caller's
``X-Request-ID`` or a new one, in `memlet.log.request_id_var` while the request runs and echoed on the response),
the request metrics (`memlet.metrics.record_request`), the loopback Host check (400), the body-size limit (413 by
Content-Length, or while a chunked body streams in), the password (401), the ``/latest`` alias of ``/v1`` and
trailing-slash tolerance. Each concern's
code stays in its own module (`memlet.log`, `memlet.metrics`, `memlet.api.middleware`); this layer reads the headers
once and wraps ``send`` once, instead of five coroutine layers each scanning the headers and wrapping ``send``.
"""

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlet.api.middleware import (
    LOOPBACK_ONLY_DETAIL,
    OPEN_PATHS,
    authorized,
    declared_too_big,
    foreign_host,
    latest_alias,
    send_json,
    send_unauthorized,
    serve_chunked_limited,
    serve_slash_tolerant,
    too_big,
)
from memlet.log import log_request, request_id_of, request_id_var
from memlet.metrics import record_request


class _Headers:
    """The request headers the edge reads, each its last value (as ``dict(headers)`` had it), from one pass."""

    __slots__ = ("authorization", "bare_password", "content_length", "host", "request_id", "transfer_encoding")

    def __init__(self, scope: Scope) -> None:
        self.host = self.content_length = self.transfer_encoding = None
        self.authorization = self.bare_password = None
        self.request_id = b""
        for key, value in scope.get("headers") or ():
            if key == b"host":
                self.host = bytes(value)
            elif key == b"content-length":
                self.content_length = bytes(value)
            elif key == b"x-request-id":
                self.request_id = bytes(value)
            elif key == b"transfer-encoding":
                self.transfer_encoding = bytes(value)
            elif key == b"authorization":
                self.authorization = bytes(value)
            elif key == b"x-bare-password":
                self.bare_password = bytes(value)


class EdgeMiddleware:
    """Request id, metrics, Host check, body limit, password and slash tolerance around `app`, in that order.

    `loopback_only`: the server is bound to loopback and answers only loopback Host names. `password`: None serves
    openly. `metrics`: record ``memlet_http_*`` for every request.
    """

    def __init__(
        self, app: ASGIApp, *, max_body_bytes: int, loopback_only: bool, password: str | None, metrics: bool
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.loopback_only = loopback_only
        self.password = password.encode() if password is not None else None
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _Headers(scope)
        rid = request_id_of(headers.request_id)
        rid_header = (b"x-request-id", rid.encode("latin-1"))
        token = request_id_var.set(rid)
        started = time.perf_counter()
        status = 500  # what the metrics count when the app fails before answering

        async def respond(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append(rid_header)
                log_request(scope, status, started)
            await send(message)

        try:
            await self._serve(scope, headers, receive, respond)
        finally:
            if self.metrics:
                record_request(scope, status, started)
            request_id_var.reset(token)

    async def _serve(self, scope: Scope, headers: _Headers, receive: Receive, send: Send) -> None:
        if self.loopback_only and headers.host is not None and foreign_host(headers.host):
            await send_json(send, 400, {"detail": LOOPBACK_ONLY_DETAIL})
            return
        if declared_too_big(headers.content_length, self.max_body_bytes):
            await send_json(send, 413, too_big(self.max_body_bytes))
            return
        if (
            self.password is not None
            and scope["path"] not in OPEN_PATHS
            and not authorized(headers.authorization, headers.bare_password, self.password)
        ):
            await send_unauthorized(send)
            return
        latest_alias(scope)
        if headers.transfer_encoding is not None:
            await serve_chunked_limited(self._slash_tolerant, scope, receive, send, self.max_body_bytes)
        else:
            # No chunked body: the server reads at most Content-Length bytes (checked above), or none without it.
            await serve_slash_tolerant(self.app, scope, receive, send)

    async def _slash_tolerant(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve_slash_tolerant(self.app, scope, receive, send)
