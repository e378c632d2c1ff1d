"""A recording HTTP proxy in front of the live server, able to cut one streamed response mid-way.

proxy = Proxy.start("http://127.0.0.1:8283")
proxy.cut_next("/messages", after_bytes=1500)   # the next matching streamed response is dropped mid-way
... point a client at proxy.base_url ...
proxy.calls                                     # [(method, path?query, json body or None, status)]
proxy.stop()
"""

import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}


@dataclass
class Call:
    method: str
    path: str
    body: Any
    status: int


class Proxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[Call] = []
        self.cuts: list[tuple[str, int]] = []  # (path suffix, bytes to let through)
        self.cut_done = 0
        # Fields forced into JSON request bodies of POST .../messages (a stand-in while a feature is missing).
        self.message_overrides: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut_next(self, path_suffix: str, after_bytes: int) -> None:
        """Drop the connection of the next streamed response whose path ends with `path_suffix` after some bytes."""
        with self.lock:
            self.cuts.append((path_suffix, after_bytes))

    def _take_cut(self, path: str) -> int | None:
        with self.lock:
            for i, (suffix, after) in enumerate(self.cuts):
                if path.rstrip("/").endswith(suffix):
                    del self.cuts[i]
                    return after
        return None

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if self.message_overrides and isinstance(body, dict) and request.url.path.endswith("/messages"):
            raw = json.dumps({**body, **self.message_overrides}).encode()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        client = httpx.AsyncClient(timeout=httpx.Timeout(120, connect=5))
        upstream = await client.send(
            client.build_request(request.method, self.upstream + path, headers=headers, content=raw), stream=True
        )
        with self.lock:
            self.calls.append(Call(request.method, path, body, upstream.status_code))
        cut = (
            self._take_cut(request.url.path)
            if "text/event-stream" in upstream.headers.get("content-type", "")
            else None
        )
        out_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}

        async def relay() -> Any:
            sent = 0
            try:
                async for chunk in upstream.aiter_raw():
                    if cut is not None and sent + len(chunk) > cut:
                        yield chunk[: cut - sent]
                        with self.lock:
                            self.cut_done += 1
                        raise ConnectionAbortedError("proxy cut the stream")  # uvicorn drops the connection
                    sent += len(chunk)
                    yield chunk
            finally:
                await upstream.aclose()
                await client.aclose()

        return StreamingResponse(relay(), status_code=upstream.status_code, headers=out_headers)

    @classmethod
    def start(cls, upstream: str) -> Self:
        proxy = cls(upstream)
        app = Starlette(
            routes=[
                Route("/{path:path}", proxy._handle, methods=["GET", "POST", "PATCH", "PUT", "DELETE"]),
            ]
        )
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        proxy.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="critical", lifespan="off", ws="none", timeout_graceful_shutdown=1)
        proxy._server = uvicorn.Server(config)
        proxy._thread = threading.Thread(target=proxy._server.run, kwargs={"sockets": [sock]}, daemon=True)
        proxy._thread.start()
        deadline = time.monotonic() + 10
        while not proxy._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("proxy did not start")
            time.sleep(0.01)
        return proxy

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)

    def find(self, method: str, path_part: str) -> list[Call]:
        with self.lock:
            return [c for c in self.calls if c.method == method and path_part in c.path]
