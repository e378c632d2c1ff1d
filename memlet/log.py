"""Structured (key=value / JSON) logging and the request-id middleware."""

import json
import logging
import sys
import time
import uuid
from contextvars import ContextVar
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if rid := request_id_var.get():
            entry["request_id"] = rid
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("memlet")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(f"memlet.{name}")


def log_fields(**fields: Any) -> dict[str, Any]:
    """``logger.info("msg", extra=log_fields(agent_id=...))`` attaches structured fields."""
    return {"fields": fields}


class RequestIdMiddleware:
    """Gives every request an id (or keeps the caller's ``X-Request-ID``) and echoes it in the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log = get_logger("http")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        rid = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or uuid.uuid4().hex
        token = request_id_var.set(rid)
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append((b"x-request-id", rid.encode("latin-1")))
                self.log.debug(
                    "request",
                    extra=log_fields(
                        method=scope["method"],
                        path=scope["path"],
                        status=message["status"],
                        ms=round((time.perf_counter() - started) * 1000, 2),
                    ),
                )
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)
