"""Download a web page for the `fetch_webpage` tool and turn it into markdown.

The page, and every URL a redirect points to, is checked against the outbound policy before it is requested (and
again when the connection opens: `memlet.net.aio`), so an agent cannot make the server reach loopback, cloud
metadata or a private network the operator has not allowed. The body stops at `MAX_PAGE_BYTES`, and the whole
download, redirects included, at `PAGE_DEADLINE_S`. HTML becomes markdown through trafilatura, imported on
first use: a server whose agents never fetch a page does not hold it and lxml in memory.

Exceptions: `PageRefusedError` (the policy refuses a URL), `PageError` for every other failure; the message is
what the model reads.
"""

import asyncio
from http import HTTPStatus
from urllib.parse import urljoin, urlsplit

from memlet import __version__
from memlet.net.fetch import Fetched, Fetcher, FetchError, TooLargeError, UnsendableRequestError
from memlet.net.outbound import BlockedURLError, OutboundPolicy

MAX_PAGE_BYTES = 10 * 1024 * 1024
PAGE_TIMEOUT_S = 30.0  # to connect, and between two reads
PAGE_DEADLINE_S = 120.0
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HEADERS = {
    "User-Agent": f"Mozilla/5.0 (compatible; memlet/{__version__})",
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8",
}
_HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml", "text/xml", "application/xml"})


class PageError(Exception):
    """The page could not be fetched or read."""


class PageRefusedError(PageError):
    """The outbound policy refuses the page's URL (or a URL it redirects to)."""


def is_web_url(url: str) -> bool:
    return urlsplit(url).scheme.lower() in ("http", "https")


async def _checked(policy: OutboundPolicy, url: str) -> None:
    try:
        await policy.check_url(url, "url")
    except BlockedURLError as exc:
        raise PageRefusedError(exc.message.removeprefix("INVALID_ARGUMENT: ")) from None


def _status_error(status: int, url: str) -> PageError:
    """The text `requests`' raise_for_status gave (Letta's fallback fetch used it)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    side = "Client" if status < 500 else "Server"
    return PageError(f"{status} {side} Error: {phrase} for url: {url}")


async def download(policy: OutboundPolicy, url: str) -> Fetched:
    """The page's answer, following up to MAX_REDIRECTS redirects, each target checked first."""
    try:
        async with asyncio.timeout(PAGE_DEADLINE_S):
            return await _follow(policy, url)
    except TimeoutError:
        raise PageError(f"the page took longer than {PAGE_DEADLINE_S:.0f} s to download") from None


async def _follow(policy: OutboundPolicy, url: str) -> Fetched:
    async with Fetcher(policy, PAGE_TIMEOUT_S) as fetcher:
        for _ in range(MAX_REDIRECTS + 1):
            await _checked(policy, url)
            try:
                answer = await fetcher.request("GET", url, headers=_HEADERS, max_bytes=MAX_PAGE_BYTES)
            except TooLargeError:
                raise PageError(f"the page is larger than {MAX_PAGE_BYTES} bytes") from None
            except (FetchError, UnsendableRequestError) as exc:
                raise PageError(str(exc)) from None
            if answer.status not in _REDIRECTS or not answer.location:
                if answer.status >= 400:
                    raise _status_error(answer.status, url)
                return answer
            url = urljoin(url, answer.location)
            if not is_web_url(url):
                raise PageError(f"the page redirects to {url!r}, which is not an http or https URL")
    raise PageError(f"more than {MAX_REDIRECTS} redirects")


def _markdown(html: bytes) -> str:
    # Imported here, on the first page fetched: trafilatura and lxml would otherwise weigh on every server's memory.
    import trafilatura

    return trafilatura.extract(html, output_format="markdown") or trafilatura.html2txt(html)


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


async def page_text(answer: Fetched) -> str:
    """The page as markdown (HTML, or an unlabelled body), or as it is (other text: plain, JSON, markdown)."""
    media_type = answer.content_type.split(";", 1)[0].strip().lower()
    if media_type in _HTML_TYPES or media_type.endswith("+xml"):
        return await asyncio.to_thread(_markdown, answer.body)  # parsing a large page takes a while: off the loop
    if media_type.startswith("text/") or media_type == "application/json" or media_type.endswith("+json"):
        try:
            return answer.body.decode(_charset(answer.content_type), "replace")
        except LookupError:
            return answer.body.decode("utf-8", "replace")
    raise PageError(f"the page's content type {media_type!r} is not text")
