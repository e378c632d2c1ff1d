"""The demo MCP server behind OAuth, for the OAuth flow test: a streamable-HTTP MCP server (official SDK) whose
`/mcp` answers 401 without the access token, plus a minimal authorization server on the same origin (RFC 9728
resource metadata, RFC 8414 server metadata, dynamic registration, token endpoint). Run in a thread with
`serve(port)`; `State` records what the authorization server saw."""

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from mcp.server.mcpserver import MCPServer

from tests.mcp_servers.demo_server import add_tools

ACCESS_TOKEN = "at-OAUTH-SECRET"


@dataclass
class State:
    codes: list[str] = field(default_factory=list)
    registered: list[dict[str, Any]] = field(default_factory=list)


async def _send_json(send: Any, status: int, body: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    raw = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": raw})


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def build_app(port: int, state: State) -> Any:
    origin = f"http://127.0.0.1:{port}"
    server = MCPServer("oauth-demo")
    add_tools(server)
    inner = server.streamable_http_app()
    resource_meta = {"resource": f"{origin}/mcp", "authorization_servers": [origin]}
    server_meta = {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/authorize",
        "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
    }

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        path = scope["path"]
        if path.startswith("/.well-known/oauth-protected-resource"):
            return await _send_json(send, 200, resource_meta)
        if path.startswith("/.well-known/oauth-authorization-server"):
            return await _send_json(send, 200, server_meta)
        if path == "/register":
            meta = json.loads(await _body(receive))
            state.registered.append(meta)
            info = {**meta, "client_id": "demo-client", "client_id_issued_at": int(time.time())}
            return await _send_json(send, 201, info)
        if path == "/token":
            form = parse_qs((await _body(receive)).decode())
            state.codes += form.get("code", [])
            return await _send_json(
                send, 200, {"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600}
            )
        headers = dict(scope["headers"])
        if headers.get(b"authorization") != f"Bearer {ACCESS_TOKEN}".encode():
            challenge = f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
            return await _send_json(send, 401, {"error": "unauthorized"}, [(b"www-authenticate", challenge.encode())])
        return await inner(scope, receive, send)

    return app


@contextlib.contextmanager
def serve(port: int) -> Iterator[State]:
    state = State()
    config = uvicorn.Config(build_app(port, state), host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield state
    finally:
        server.should_exit = True
        thread.join(timeout=10)
