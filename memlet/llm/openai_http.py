"""JSON over HTTP to an OpenAI-compatible API: one pooled aiohttp session per endpoint, no SDK in between.

``post`` returns the decoded JSON body (plain dicts and lists; the text when the body is not JSON), ``stream``
the decoded ``data:`` events of a server-sent event stream up to ``[DONE]``. Both raise the
``memlet.llm.wire_errors`` exceptions: a non-2xx answer, a timeout, a failed connection (the outbound policy's
refusals included), an error object inside a stream, an event that is not JSON.

Requests carry what the openai SDK sent: ``Authorization: Bearer <key>`` (a placeholder for servers that need
none), JSON ``Content-Type`` and ``Accept``, and its ``User-Agent``; URLs join the base URL and the path as the
SDK did (``https://host/v1`` and ``https://host/v1/`` both give ``https://host/v1/chat/completions``).

aiohttp rather than httpx: its C parser reads a streamed answer for about a quarter of the CPU httpx's pure-Python
stack takes, and a turn makes one such call per step (`bench/bench_llm_call.py`).
"""

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from functools import cache
from importlib import metadata
from typing import Any

import aiohttp
import orjson
from yarl import URL

from memlet.llm.json_text import InvalidJSON, decode_json
from memlet.llm.sse import ServerEvent, SSEDecoder
from memlet.llm.wire_errors import (
    ProviderConnectionError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeoutError,
    status_error,
    stream_error,
)
from memlet.net.aio import OutboundSession
from memlet.net.fetch import parse_url
from memlet.net.outbound import OutboundPolicy

# Local servers (vLLM, Ollama, LM Studio) ignore the key, but the SDK refused to start without one.
PLACEHOLDER_API_KEY = "sk-no-key"
# How long to read the rest of a stream after [DONE], so its HTTP/1.1 connection can be reused (as the SDK did).
DRAIN_TIMEOUT_S = 0.1
# Failures of the connection itself: aiohttp's client errors, TLS, and the socket's own (a refused address).
_CONNECTION_ERRORS = (aiohttp.ClientError, ssl.SSLError, OSError)


@cache
def user_agent() -> str:
    """The User-Agent the openai SDK sent (some gateways tell clients apart by it)."""
    try:
        version = metadata.version("openai")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"AsyncOpenAI/Python {version}"


def join_url(base_url: str | URL, path: str) -> URL:
    """``path`` under ``base_url``, which is read as a directory (a missing trailing slash is added); its query
    stays."""
    base = parse_url(base_url) if isinstance(base_url, str) else base_url
    raw_path = base.raw_path if base.raw_path.endswith("/") else base.raw_path + "/"
    return URL.build(
        scheme=base.scheme,
        authority=base.raw_authority,
        path=raw_path + path.lstrip("/"),
        query_string=base.raw_query_string,
        encoded=True,
    )


@contextlib.contextmanager
def transport_errors() -> Iterator[None]:
    """Timeouts and connection failures as ``ProviderTimeoutError`` / ``ProviderConnectionError``."""
    try:
        yield
    except TimeoutError as exc:  # aiohttp's connect and read timeouts are TimeoutErrors (and OSErrors: first)
        raise ProviderTimeoutError() from exc
    except _CONNECTION_ERRORS as exc:
        raise ProviderConnectionError() from exc


def encode_json(body: Any) -> bytes:
    """Compact UTF-8 JSON, as the SDK sent it (the standard library for what orjson refuses, e.g. huge ints)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _decoded_body(content: bytes) -> Any:
    """The JSON of a 200 body; its text when it is not JSON (the caller reports it as unusable)."""
    try:
        return decode_json(content)
    except InvalidJSON:
        return content.decode("utf-8", "replace")


class OpenAIHTTP:
    """POSTs JSON to one OpenAI-compatible base URL; ``aclose`` closes its connections.

    ``policy``: check every connection against the outbound policy (user-given URLs); None for URLs memlet trusts.
    """

    def __init__(
        self, base_url: str, api_key: str | None, timeout_s: float, policy: OutboundPolicy | None = None
    ) -> None:
        # Parsed once; the client factories refuse an endpoint that cannot be sent first (`check_sendable_endpoint`).
        self.base_url = parse_url(base_url)
        self._outbound = OutboundSession(policy, timeout_s)
        self._headers = {
            "Authorization": f"Bearer {api_key or PLACEHOLDER_API_KEY}",
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": user_agent(),
        }
        self._urls: dict[str, URL] = {}

    async def aclose(self) -> None:
        await self._outbound.aclose()

    async def _send(self, path: str, body: Any) -> aiohttp.ClientResponse:
        content = body if isinstance(body, bytes) else encode_json(body)  # bytes: encoded by the caller
        outbound = self._outbound
        with transport_errors():
            url = self._urls.get(path)
            if url is None:  # checked once: the policy and the URL are fixed (a refused one is never kept)
                url = join_url(self.base_url, path)
                await outbound.check(url)
                self._urls[path] = url
            return await outbound.session().post(
                url, data=content, headers=self._headers, allow_redirects=outbound.follow_redirects
            )

    async def post(self, path: str, body: Any) -> Any:
        """POST ``body`` (JSON data, or its encoded bytes) and return the decoded answer."""
        response = await self._send(path, body)
        content = await _read_whole(response)
        if not 200 <= response.status < 300:
            raise _status_error(response, content)
        return _decoded_body(content)

    async def stream(self, path: str, body: Any) -> "EventStream":
        """POST ``body`` (JSON data, or its encoded bytes) and return its event stream once the answer's status is
        known to be a success."""
        response = await self._send(path, body)
        if not 200 <= response.status < 300:
            raise _status_error(response, await _read_whole(response))
        return EventStream(response)


async def _read_whole(response: aiohttp.ClientResponse) -> bytes:
    """The body, read to its end; the connection is released either way."""
    try:
        with transport_errors():
            return await response.read()
    finally:
        response.release()


def _status_error(response: aiohttp.ClientResponse, content: bytes) -> ProviderHTTPError:
    return status_error(response.status, content.decode("utf-8", "replace"), response.headers)


class EventStream:
    """The decoded JSON objects of an SSE response, in order; ``close()`` ends it and releases the connection (back
    to the pool when the body was read to its end, else closed)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self._events = self._read()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self

    async def __anext__(self) -> dict[str, Any]:
        return await self._events.__anext__()

    async def close(self) -> None:
        await self._events.aclose()
        self._response.release()

    async def _bytes(self) -> AsyncGenerator[bytes, None]:
        with transport_errors():
            async for chunk in self._response.content.iter_any():
                yield chunk

    async def _read(self) -> AsyncGenerator[dict[str, Any], None]:
        decoder = SSEDecoder()
        async with contextlib.aclosing(self._bytes()) as chunks:
            async for chunk in chunks:
                for event in decoder.feed(chunk):
                    if event.data.startswith(b"[DONE]"):
                        await self._drain(chunks)
                        return
                    yield _decoded(event)
        for event in decoder.flush():
            if event.data.startswith(b"[DONE]"):
                return
            yield _decoded(event)

    async def _drain(self, chunks: AsyncGenerator[bytes, None]) -> None:
        """Read what follows [DONE] (usually only the end of the chunked body, often already read) for a short
        while."""
        if self._response.content.at_eof():
            return
        with contextlib.suppress(TimeoutError, ProviderHTTPError):
            async with asyncio.timeout(DRAIN_TIMEOUT_S):
                async for _ in chunks:
                    pass


def _decoded(event: ServerEvent) -> dict[str, Any]:
    try:
        data = decode_json(event.data)
    except InvalidJSON:
        data = None
    if not isinstance(data, dict):
        raise ProviderResponseError(f"Unparsable stream event: {event.data[:200].decode('utf-8', 'replace')}")
    if error := stream_error(data):
        raise error
    return data
