"""A small HTTP server on 127.0.0.1 for outbound-URL tests: records every request and answers like an
OpenAI-compatible provider (or with a redirect / an error, when told to)."""

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from memlet.config import Settings
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts
from tests.conftest import LiveServer, reset_database

COMPLETION = {
    "id": "chatcmpl-listener",
    "object": "chat.completion",
    "created": 0,
    "model": "foreign-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello from afar"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Listener:
    """Records requests; answers /models and /chat/completions, or `status` + `body`, or a redirect."""

    def __init__(self, port: int = 0) -> None:
        self.seen: list[Seen] = []
        self.redirect_to: str | None = None
        self.status = 200
        self.body: bytes | None = None
        self.models = ["foreign-model"]  # the ids its /models lists
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.seen.append(Seen(self.command, self.path, headers, body))
                status, content, ctype = owner.answer(self.path, body)
                self.send_response(status)
                if owner.redirect_to is not None:
                    self.send_header("Location", owner.redirect_to + self.path)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str, body: Any) -> tuple[int, bytes, str]:
        if self.redirect_to is not None:
            return 307, b"", "text/plain"
        if self.body is not None or self.status != 200:
            return self.status, self.body or b"", "text/plain"
        if path.endswith("/models"):
            listed = [{"id": model, "object": "model"} for model in self.models]
            return 200, json.dumps({"data": listed}).encode(), "application/json"
        if isinstance(body, dict) and body.get("stream"):
            chunk = {
                **COMPLETION,
                "object": "chat.completion.chunk",
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": "hello from afar"}, "finish_reason": "stop"}
                ],
            }
            return 200, f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), "text/event-stream"
        return 200, json.dumps(COMPLETION).encode(), "application/json"

    def authorizations(self) -> list[str]:
        return [s.headers.get("authorization", "") for s in self.seen]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def allowing(*servers: Listener) -> OutboundPolicy:
    """An outbound policy that lets connections reach these listeners (and nothing else private)."""
    return OutboundPolicy(parse_allowed_hosts(",".join(f"127.0.0.1:{s.port}" for s in servers)))


@contextmanager
def listener(port: int = 0) -> Iterator[Listener]:
    server = Listener(port)
    try:
        yield server
    finally:
        server.close()


@contextmanager
def start_server(settings: Settings, pg_uri: str, **overrides: Any) -> Iterator[LiveServer]:
    """A real server with these settings changed (e.g. `allowed_hosts`); the database is emptied afterwards."""
    server = LiveServer(settings.model_copy(update=overrides)).start()
    try:
        yield server
    finally:
        server.stop()
        reset_database(pg_uri)


@contextmanager
def http_client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        yield client
