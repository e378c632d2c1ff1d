"""Connecting to an MCP server as an event stream, with OAuth when the server asks for it (Letta's flow).

Events (`data: {"event": ..., ...}`): `connection_attempt`, then `success` (the tools) or `error`; when the server
needs authorization: `oauth_required`, `authorization_url` (url, session_id) for the user to open,
`waiting_for_auth`, then `success` or `error`. The SDK's OAuth client does discovery, client registration, PKCE and
the token exchange; memlet stores the attempt as a session row (`mcp-oauth-<8 hex>`), and the provider's redirect to
`GET /v1/tools/mcp/oauth/callback` records the code there, which the waiting stream picks up (polled every second
for up to `OAUTH_WAIT_S`). The tokens are stored sealed; the access token becomes the server's bearer token.
The SDK's auth modules are imported when an attempt first needs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from time import monotonic
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from pydantic import AnyUrl
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.actor import Actor
from memlet.config import Settings
from memlet.crypto import Keyring, keyring_for
from memlet.mcp import client, connection, credentials
from memlet.mcp.repository import MCPServerRepository, OAuthSessionRepository

if TYPE_CHECKING:
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

OAUTH_WAIT_S = 300.0
POLL_S = 1.0
CALLBACK_PATH = "/v1/tools/mcp/oauth/callback"


def event(name: str, **fields: Any) -> str:
    return f"data: {json.dumps({'event': name, **fields})}\n\n"


def is_auth_error(exc: Exception) -> bool:
    return isinstance(exc, client.MCPAuthRequired)


def redirect_uri(settings: Settings, base_url: str) -> str:
    return (settings.mcp_oauth_redirect_base or base_url).rstrip("/") + CALLBACK_PATH


class _MemoryStorage:
    """The SDK's token storage for one authorization attempt (memlet persists the result itself)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass(frozen=True)
class ConnectRequest:
    actor: Actor
    spec: client.ServerSpec
    redirect_uri: str
    server_id: str | None = None
    oauth_on_any_error: bool = False  # the new route starts OAuth on any failure, the legacy one only on a 401


class OAuthAttempt:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], keyring: Keyring, req: ConnectRequest) -> None:
        self.sessionmaker = sessionmaker
        self.keyring = keyring
        self.req = req
        self.session_id = f"mcp-oauth-{secrets.token_hex(4)}"
        self.urls: asyncio.Queue[str] = asyncio.Queue()
        self.storage = _MemoryStorage()

    async def on_redirect(self, url: str) -> None:
        state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        async with self.sessionmaker() as session, session.begin():
            await OAuthSessionRepository(session).add(
                {
                    "id": self.session_id,
                    "organization_id": self.req.actor.organization_id,
                    "created_by_id": self.req.actor.user_id,
                    "server_id": self.req.server_id,
                    "server_url": self.req.spec.server_url or "",
                    "server_name": self.req.spec.name,
                    "state": state or secrets.token_urlsafe(24),
                    "status": "pending",
                    "authorization_url": url,
                }
            )
        await self.urls.put(url)

    async def on_callback(self) -> AuthorizationCodeResult:
        from mcp.client.auth import AuthorizationCodeResult, OAuthFlowError

        deadline = monotonic() + OAUTH_WAIT_S
        while monotonic() < deadline:
            async with self.sessionmaker() as session:
                row = await OAuthSessionRepository(session).find(self.req.actor.organization_id, self.session_id)
            if row is not None and row.status == "authorized" and row.code_enc:
                return AuthorizationCodeResult(code=self.keyring.reveal(row.code_enc) or "", state=row.state)
            if row is not None and row.status == "error":
                raise OAuthFlowError(f"authorization failed: {row.error}")
            await asyncio.sleep(POLL_S)
        raise OAuthFlowError(f"no authorization within {OAUTH_WAIT_S:g} s")

    def provider(self) -> OAuthClientProvider:
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientMetadata

        metadata = OAuthClientMetadata(
            client_name="memlet",
            redirect_uris=[AnyUrl(self.req.redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        server_url = self.req.spec.server_url or ""
        return OAuthClientProvider(server_url, metadata, self.storage, self.on_redirect, self.on_callback)

    async def save_tokens(self) -> None:
        tokens = self.storage.tokens
        if tokens is None:
            return
        async with self.sessionmaker() as session, session.begin():
            row = await OAuthSessionRepository(session).find(self.req.actor.organization_id, self.session_id)
            if row is not None:
                row.tokens_enc = self.keyring.seal(tokens.model_dump_json())
            if self.req.server_id:
                server = await MCPServerRepository(session).find(self.req.actor.organization_id, self.req.server_id)
                if server is not None:
                    server.auth_header = credentials.DEFAULT_AUTH_HEADER
                    server.auth_token_enc = self.keyring.seal(tokens.access_token)


async def connect_events(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, req: ConnectRequest
) -> AsyncIterator[str]:
    yield event("connection_attempt", server_name=req.spec.name)
    limits = connection.limits(settings)
    try:
        tools = await client.list_tools(req.spec, limits)
    except client.MCPError as exc:
        error = exc
    else:
        yield event("success", tools=[client.tool_dict(t) for t in tools])
        return
    if req.spec.server_type == "stdio":
        yield event("error", message=f"OAuth not supported for stdio: {error}")
        return
    if not (req.oauth_on_any_error or is_auth_error(error)):
        yield event("error", message=str(error))
        return
    yield event("oauth_required", message="The MCP server requires authorization")
    attempt = OAuthAttempt(sessionmaker, keyring_for(settings), req)
    spec = replace(req.spec, auth=attempt.provider())
    work = asyncio.create_task(
        client.list_tools(spec, replace(limits, connect_timeout_s=limits.connect_timeout_s + OAUTH_WAIT_S))
    )
    try:
        while not work.done():
            url = asyncio.create_task(attempt.urls.get())
            await asyncio.wait({work, url}, return_when=asyncio.FIRST_COMPLETED)
            if url.done():
                yield event("authorization_url", url=url.result(), session_id=attempt.session_id)
                yield event("waiting_for_auth", message="Waiting for the user to authorize")
            else:
                url.cancel()
        try:
            tools = work.result()
        except client.MCPError as exc:
            yield event("error", message=str(exc))
            return
        await attempt.save_tokens()
        yield event("success", tools=[client.tool_dict(t) for t in tools])
    finally:
        if not work.done():
            work.cancel()
            with contextlib.suppress(BaseException):
                await work


async def record_callback(
    session: AsyncSession,
    keyring: Keyring,
    code: str | None,
    state: str | None,
    error: str | None,
    description: str | None,
) -> dict[str, Any]:
    """The provider's redirect: record the code (or the error) on the session with this state. Always a 200 body."""
    if not state:
        return {"status": "error", "message": "Missing state parameter"}
    row = await OAuthSessionRepository(session).by_state(state)
    if row is None:
        return {"status": "error", "message": "Invalid or expired OAuth session"}
    if error:
        row.status, row.error = "error", description or error
        return {"status": "error", "message": f"OAuth error: {error}" + (f" - {description}" if description else "")}
    if not code:
        return {"status": "error", "message": "Missing authorization code"}
    row.status, row.code_enc = "authorized", keyring.seal(code)
    return {"status": "success", "message": "Authorization successful", "server_url": row.server_url}
