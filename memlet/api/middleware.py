"""What memlet checks and tolerates around every request, one small function each: the loopback Host check, the
bearer password, the body-size limit and trailing-slash tolerance. `memlet.api.edge` runs them in one ASGI layer."""

import functools
import hmac
import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlet.exposure import is_loopback_host

# Probes stay open; everything else, the API docs and schema included (as Letta), needs the password. Letta's list
# leaves out `/latest/health` without its slash, so that one needs the password there too.
OPEN_PATHS = frozenset(
    {"/v1/health", "/v1/health/", "/v1/ready", "/v1/ready/", "/latest/health/", "/latest/ready", "/latest/ready/"}
)


def latest_alias(scope: Scope) -> None:
    """``/latest/...`` served as ``/v1/...``: Letta mounts every v1 router under ``/latest`` too (outside its schema).

    The request is routed (and counted in the metrics) as its ``/v1`` path, so the alias has no routes of its own
    and no entries in the schema.
    """
    path: str = scope["path"]
    if path.startswith("/latest/"):
        scope["path"] = "/v1" + path[len("/latest") :]
        raw: bytes = scope.get("raw_path") or b""
        scope["raw_path"] = b"/v1" + raw[len(b"/latest") :] if raw.startswith(b"/latest/") else scope["path"].encode()


async def send_json(
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


def host_name(host: str) -> str:
    """The name part of a Host header: ``[::1]:8283`` -> ``[::1]``, ``localhost:8283`` -> ``localhost``."""
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0] if host.count(":") == 1 else host


LOOPBACK_ONLY_DETAIL = "Invalid Host header: this server listens on loopback and answers only localhost names"


@functools.lru_cache(maxsize=256)
def foreign_host(host: bytes) -> bool:
    """Whether a request's Host names anything but loopback (DNS rebinding), on a server bound to loopback.

    A web page can make its own domain resolve to 127.0.0.1; the browser then sends that domain as the Host, which
    is how the request is told apart from a local client's (``localhost``, ``127.x.x.x``, ``[::1]``, any port).
    Remembered per Host value (parsing an address is most of the check); bounded, as a caller picks the value.
    """
    return not is_loopback_host(host_name(host.decode("latin-1")))


def authorized(authorization: bytes | None, bare_password: bytes | None, password: bytes) -> bool:
    """``Authorization: Bearer <password>`` or Letta's ``X-BARE-PASSWORD: password <pw>``, compared in constant time.

    With a server password set, every route but health and readiness (`OPEN_PATHS`) needs one of them.
    """
    scheme, _, token = (authorization or b"").partition(b" ")
    if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), password):
        return True
    scheme, _, token = (bare_password or b"").partition(b" ")
    return scheme.lower() == b"password" and hmac.compare_digest(token.strip(), password)


async def send_unauthorized(send: Send) -> None:
    await send_json(send, 401, {"detail": "Unauthorized"}, [(b"www-authenticate", b"Bearer")])


def too_big(max_bytes: int) -> dict[str, str]:
    return {"detail": f"Request body exceeds the maximum size of {max_bytes} bytes"}


def declared_too_big(content_length: bytes | None, max_bytes: int) -> bool:
    """A Content-Length over the limit: answered 413 before the body is read."""
    return content_length is not None and content_length.isdigit() and int(content_length) > max_bytes


async def serve_chunked_limited(app: ASGIApp, scope: Scope, receive: Receive, send: Send, max_bytes: int) -> None:
    """Serves a request with a chunked body (no Content-Length), answering 413 once more than `max_bytes` arrive."""
    received = 0
    started = over = replaced = False

    async def guarded_receive() -> Message:
        nonlocal received, over
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > max_bytes:
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
            await send_json(send, 413, too_big(max_bytes))
            return
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, guarded_receive, tracking_send)
    except _BodyTooLarge:
        if not started:
            await send_json(send, 413, too_big(max_bytes))


class _BodyTooLarge(Exception):
    pass


async def serve_slash_tolerant(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answers ``/v1/agents`` and ``/v1/agents/`` alike (Letta redirected one form; clients use both).

    Matching every route up front cost more than some handlers, so the request goes through as sent and only a
    router miss (404 "Not Found", nothing matched, nothing read from the body) is retried with the slash toggled.
    """
    path: str = scope.get("path", "/")
    if path == "/":
        await app(scope, receive, send)
        return
    held: list[Message] = []

    async def hold_miss(message: Message) -> None:
        if held or (message["type"] == "http.response.start" and message["status"] == 404):
            held.append(message)
        else:
            await send(message)

    await app(scope, receive, hold_miss)
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
        await app(retry, receive, send)
    finally:
        # What answered, for the metrics of the original request (read after the response is sent).
        scope.update({k: retry[k] for k in ("route", "path_params", "path") if k in retry})


_ROUTER_MISS = json.dumps({"detail": "Not Found"}, separators=(",", ":")).encode()
