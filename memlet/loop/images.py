"""Images given by URL in a user message (or a client's tool result) are fetched once, when the turn starts (or the
result is applied), and kept as base64 data.

As in Letta, the model then always receives the bytes (a provider cannot reach a private URL, and a public one
may change or vanish); the stored row holds the data too, so later requests send the same image. Fetches go
through the outbound-URL policy (`memlet.net`): a private or loopback host the operator has not allowed is
refused with a 400, like every other user-given URL.
"""

import asyncio
import base64
import binascii
import mimetypes
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from memlet.config import Settings
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.messages.content import Base64Image, ImageContent, UrlImage
from memlet.net.fetch import Fetcher, FetchError, TooLargeError, UnsendableRequestError
from memlet.net.outbound import policy_for

MAX_IMAGE_BYTES = 20 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0
CONCURRENT_FETCHES = 4


def _url_images(rows: Sequence[orm.Message]) -> list[dict[str, Any]]:
    """The URL image sources of user rows (mutable dicts inside the rows' content)."""
    sources = []
    for row in rows:
        if row.role != "user":
            continue
        for part in row.content or []:
            source = part.get("source") if part.get("type") == "image" else None
            if isinstance(source, dict) and source.get("type") == "url" and source.get("url"):
                sources.append(source)
    return sources


def _check_scheme(url: str) -> None:
    """Letta's refusal of an image URL that is neither http(s) nor data (a local `file://` path, say)."""
    try:
        scheme = urlsplit(url).scheme
    except ValueError:  # a malformed http(s) URL: the outbound policy names the problem
        return
    if scheme.lower() not in ("http", "https", "data"):
        raise BadRequestError(
            f"INVALID_ARGUMENT: Unsupported image URL scheme '{scheme or '<missing>'}'. Only 'http', 'https', and "
            "'data' image URLs are supported. Local file paths (file://) are not allowed."
        )


def _from_data_url(url: str) -> tuple[str, str]:
    header, _, data = url.partition(",")
    media_type = header[len("data:") :].split(";", 1)[0] or "image/jpeg"  # Letta's default when none is named
    if ";base64" not in header:
        raise BadRequestError(f"INVALID_ARGUMENT: image data URL must be base64-encoded: {url[:64]!r}")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: image data URL is not valid base64: {exc}") from exc
    return media_type, data


async def _fetch(fetcher: Fetcher, url: str) -> tuple[str, str]:
    try:
        # One byte over the limit is enough to refuse it: a bigger image is never read whole into memory.
        response = await fetcher.request("GET", url, max_bytes=MAX_IMAGE_BYTES)
    except TooLargeError as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: image {url!r} is larger than {MAX_IMAGE_BYTES} bytes") from exc
    except (FetchError, UnsendableRequestError) as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: could not fetch image {url!r}: {exc}") from exc
    if response.status != 200:
        raise BadRequestError(f"INVALID_ARGUMENT: could not fetch image {url!r}: HTTP {response.status}")
    media_type = response.content_type.split(";", 1)[0].strip()
    if not media_type.startswith("image/"):
        media_type = mimetypes.guess_type(url)[0] or "image/png"
    return media_type, base64.b64encode(response.body).decode()


async def inline_url_images(rows: Sequence[orm.Message], settings: Settings) -> None:
    """Replace every URL image source in the user `rows` by base64 data (in place). Raises BadRequestError.

    Up to CONCURRENT_FETCHES images are fetched at once; the first failure cancels the others.
    """
    await _inline(_url_images(rows), settings)


async def inline_tool_return_images(items: Sequence[Any], settings: Settings) -> None:
    """Replace the URL images of clients' tool results given in parts (approval answers) by base64 data, in place,
    as Letta resolves them before storing the answer. Raises BadRequestError."""
    parts: list[tuple[ImageContent, UrlImage]] = [
        (part, part.source)
        for item in items
        if isinstance(getattr(item, "tool_return", None), list)
        for part in item.tool_return
        if isinstance(part, ImageContent) and isinstance(part.source, UrlImage)
    ]
    sources: list[dict[str, Any]] = [{"type": "url", "url": source.url} for _, source in parts]
    await _inline(sources, settings)
    for (part, _), source in zip(parts, sources, strict=True):
        part.source = Base64Image(media_type=source["media_type"], data=source["data"])


async def _inline(sources: list[dict[str, Any]], settings: Settings) -> None:
    if not sources:
        return
    policy = policy_for(settings)
    gate = asyncio.Semaphore(CONCURRENT_FETCHES)

    async def inline(fetcher: Fetcher, source: dict[str, Any]) -> None:
        url = str(source["url"])
        _check_scheme(url)
        if url[:5].lower() == "data:":
            media_type, data = _from_data_url(url)
        else:
            await policy.check_url(url, "image url")
            async with gate:
                media_type, data = await _fetch(fetcher, url)
        detail = source.get("detail")
        source.clear()
        source.update({"type": "base64", "media_type": media_type, "data": data})
        if detail:
            source["detail"] = detail

    async with Fetcher(policy, FETCH_TIMEOUT_S) as fetcher:
        try:
            async with asyncio.TaskGroup() as group:
                for source in sources:
                    group.create_task(inline(fetcher, source))
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None  # the first failure, as a serial loop would raise it
