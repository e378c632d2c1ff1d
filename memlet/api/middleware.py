"""Pure-ASGI middleware: loopback Host check, bearer-password auth, body-size limit and trailing-slash tolerance."""

import hmac
import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlet.exposure import is_loopback_host

# Probes stay open; everything else, the API docs and schema included (as Letta), needs the password.
OPEN_PATHS = frozenset({"/v1/health", "/v1/health/", "/v1/ready", "/v1/ready/"})


async def _send_json(
    send: Send,
    status: int,
    body: Mapping[str, object],
    headers: list[tuple[bytes, bytes]] = [],  # noqa: B006
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def header(scope: Scope, name: bytes) -> bytes | None:
    """The last value of header `name` (lower case), as ``dict(headers)`` would give, without building the dict."""
    found = None
    for key, value in scope.get("headers") or ():
        if key == name:
            found = bytes(value)
    return found


def host_name(host: str) -> str:
    """The name part of a Host header: ``[::1]:8283`` -> ``[::1]``, ``localhost:8283`` -> ``localhost``."""
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0] if host.count(":") == 1 else host


class LoopbackHostMiddleware:
    """On a server bound to loopback, answers 400 to requests addressed to any other name (DNS rebinding).

    A web page can make its own domain resolve to 127.0.0.1; the browser then sends that domain as the Host, which
    is how the request is told apart from a local client's (``localhost``, ``127.x.x.x``, ``[::1]``, any port).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = header(scope, b"host")
            if host is not None and not is_loopback_host(host_name(host.decode("latin-1"))):
                detail = "Invalid Host header: this server listens on loopback and answers only localhost names"
                await _send_json(send, 400, {"detail": detail})
                return
        await self.app(scope, receive, send)


class PasswordAuthMiddleware:
    """With a server password set, every route but health and readiness needs ``Authorization: Bearer <password>``.

    Letta's ``X-BARE-PASSWORD: password <pw>`` header is accepted too. Compared in constant time.
    """

    def __init__(self, app: ASGIApp, password: str) -> None:
        self.app = app
        self.password = password.encode()

    def _authorized(self, scope: Scope) -> bool:
        auth = header(scope, b"authorization") or b""
        scheme, _, token = auth.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.password):
            return True
        bare = header(scope, b"x-bare-password") or b""
        scheme, _, token = bare.partition(b" ")
        return scheme.lower() == b"password" and hmac.compare_digest(token.strip(), self.password)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        await _send_json(send, 401, {"detail": "Unauthorized"}, [(b"www-authenticate", b"Bearer")])


class BodyLimitMiddleware:
    """Rejects bodies over ``max_bytes`` with 413, by Content-Length or while streaming a chunked body."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _send_json(send, 413, self._too_big())
            return
        if header(scope, b"transfer-encoding") is None:
            # No chunked body: the server reads at most Content-Length bytes (checked above), or none without it.
            await self.app(scope, receive, send)
            return
        received = 0
        started = over = replaced = False

        async def guarded_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    over = True
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started, replaced
            if replaced:  # the rest of the app's own answer to the failed read
                return
            if over and not started and message["type"] == "http.response.start":
                # FastAPI answers a failed body read itself (400, "error parsing the body"): send the 413 instead.
                started = replaced = True
                await _send_json(send, 413, self._too_big())
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, guarded_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await _send_json(send, 413, self._too_big())

    def _too_big(self) -> dict[str, str]:
        return {"detail": f"Request body exceeds the maximum size of {self.max_bytes} bytes"}


class _BodyTooLarge(Exception):
    pass


class TrailingSlashMiddleware:
    """Answers ``/v1/agents`` and ``/v1/agents/`` alike (Letta redirected one form; clients use both).

    Matching every route up front cost more than some handlers, so the request goes through as sent and only a
    router miss (404 "Not Found", nothing matched, nothing read from the body) is retried with the slash toggled.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "/")
        if scope["type"] != "http" or path == "/":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold_miss(message: Message) -> None:
            if held or (message["type"] == "http.response.start" and message["status"] == 404):
                held.append(message)
            else:
                await send(message)

        await self.app(scope, receive, hold_miss)
        if not held:
            return
        body = b"".join(m.get("body", b"") for m in held[1:])
        if body != _ROUTER_MISS:
            for message in held:  # a handler's own 404 (e.g. an unknown agent): pass it on unchanged
                await send(message)
            return
        other = path[:-1] if path.endswith("/") else path + "/"
        retry = dict(scope, path=other, raw_path=other.encode())
        try:
            await self.app(retry, receive, send)
        finally:
            # What answered, for the metrics of the original request (read after the response is sent).
            scope.update({k: retry[k] for k in ("route", "path_params", "path") if k in retry})


_ROUTER_MISS = json.dumps({"detail": "Not Found"}, separators=(",", ":")).encode()
