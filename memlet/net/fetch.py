"""One-off HTTP requests under the outbound policy: provider model lists and key checks, image fetches, run
callbacks. They share the OpenAI-compatible clients' stack (`memlet.net.aio`: aiohttp, the policy's resolver, no
redirects, no environment proxies), so a server that only talks to OpenAI-compatible endpoints never loads httpx2
(only the Anthropic and MCP SDKs need it), and no request builds a TLS context of its own.

Exceptions: `UnsendableRequestError` when a URL or header cannot go on the wire (a control character, a value that
is not ASCII, a malformed URL); `FetchError` when the request was sent but no answer came (refused by the policy or
the host, TLS, timeout; `TooLargeError`, a body beyond the caller's limit). An answer of any status is a `Fetched`.
"""

import json
import ssl
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import aiohttp
from yarl import URL

from memlet.net.aio import OutboundSession
from memlet.net.outbound import OutboundPolicy

# The most a listing or a check may answer; a caller reading a bigger body (an image) says so.
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
_READ_CHUNK = 64 * 1024
# A whole request may take this many times the per-read timeout (an image of 20 MB: 120 s at the 30 s timeout).
DEADLINE_FACTOR = 4
# What httpx refused in a URL and what cannot be in a header: control characters (a newline would split the line).
_CONTROL = frozenset(chr(c) for c in (*range(0x20), 0x7F))


class UnsendableRequestError(ValueError):
    """The URL or a header holds something that cannot be sent over HTTP."""


class FetchError(Exception):
    """No usable answer: the connection was refused or failed, it timed out, or the body was too large."""


class TooLargeError(FetchError):
    """The body went past the caller's limit; it was not read further."""


class StatusError(Exception):
    """A 4xx or 5xx answer where the caller wanted a success (`Fetched.raise_for_status`)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


@dataclass(frozen=True)
class Fetched:
    """An answer: status, content type, body (empty when the caller did not read it) and, for a redirect, where it
    points (redirects are never followed here: a caller that follows one checks the new URL first)."""

    status: int
    content_type: str
    body: bytes
    location: str = ""

    def json(self) -> Any:
        """The body as JSON; a ValueError when it is not."""
        return json.loads(self.body)

    def raise_for_status(self) -> None:
        if self.status >= 400:
            raise StatusError(self.status)


def parse_url(url: str) -> URL:
    """`url` as aiohttp sends it; `UnsendableRequestError` when it cannot be sent (yarl would drop a control
    character silently: it is refused instead, as httpx refused it)."""
    if any(c in _CONTROL for c in url):
        raise UnsendableRequestError("the URL holds a control character")
    try:
        parsed = URL(url)
        parsed.raw_host  # noqa: B018 (IDNA-encodes the host: a name that cannot be encoded fails here)
    except (ValueError, UnicodeError) as exc:
        raise UnsendableRequestError(f"the URL cannot be parsed: {exc}") from exc
    return parsed


def _headers(headers: dict[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        if not (name.isascii() and value.isascii()) or any(c in _CONTROL for c in name + value):
            raise UnsendableRequestError(f"the {name} header cannot be sent over HTTP")
    return headers


class Fetcher:
    """`async with Fetcher(policy, timeout_s) as fetcher`: requests over one pooled session, closed at the end.

    `timeout_s` bounds the connection and each read, as httpx's timeout did; a whole request, body included, also
    ends after `DEADLINE_FACTOR` times that, so a server dripping its answer a byte at a time cannot hold a turn
    or a listing for long.
    """

    def __init__(self, policy: OutboundPolicy, timeout_s: float) -> None:
        self._outbound = OutboundSession(policy, timeout_s)
        self._timeout = aiohttp.ClientTimeout(total=timeout_s * DEADLINE_FACTOR, connect=timeout_s, sock_read=timeout_s)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._outbound.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> Fetched:
        """Send one request; the body is read up to `max_bytes` (more is a FetchError; 0: not read at all)."""
        target = parse_url(url)
        if params:
            target = target.update_query(params)
        sent = _headers(dict(headers or {}))
        data = None
        if json_body is not None:
            data = json.dumps(json_body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            sent.setdefault("Content-Type", "application/json")
        outbound = self._outbound
        try:
            await outbound.check(target)
            async with outbound.session().request(
                method,
                target,
                headers=sent,
                data=data,
                allow_redirects=outbound.follow_redirects,
                timeout=self._timeout,
            ) as response:
                body = await _read(response, max_bytes) if max_bytes else b""
                answered = response.headers
                return Fetched(response.status, answered.get("Content-Type", ""), body, answered.get("Location", ""))
        except aiohttp.InvalidURL as exc:  # before ClientError: it is one
            raise UnsendableRequestError(f"the URL cannot be sent: {exc}") from exc
        except (aiohttp.ClientError, ssl.SSLError, OSError, TimeoutError) as exc:
            raise FetchError(f"{type(exc).__name__}: {exc}") from exc


async def _read(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The whole body, refused as soon as it passes `max_bytes` (a declared length is checked first)."""
    if (response.content_length or 0) > max_bytes:
        raise TooLargeError(f"the answer is larger than {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_READ_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise TooLargeError(f"the answer is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
