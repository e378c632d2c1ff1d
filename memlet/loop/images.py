"""Images given by URL in a user message are fetched once, when the turn starts, and kept as base64 data.

As in Letta, the model then always receives the bytes (a provider cannot reach a private URL, and a public one
may change or vanish); the stored row holds the data too, so later requests send the same image. Fetches go
through the outbound-URL policy (`memlet.net`): a private or loopback host the operator has not allowed is
refused with a 400, like every other user-given URL.
"""

import base64
import binascii
import mimetypes
from collections.abc import Sequence
from typing import Any

import httpx2

from memlet.config import Settings
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.net.outbound import policy_for
from memlet.net.transport import guarded_client

MAX_IMAGE_BYTES = 20 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0


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


def _from_data_url(url: str) -> tuple[str, str]:
    header, _, data = url.partition(",")
    media_type = header.removeprefix("data:").split(";", 1)[0] or "image/png"
    if ";base64" not in header:
        raise BadRequestError(f"INVALID_ARGUMENT: image data URL must be base64-encoded: {url[:64]!r}")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: image data URL is not valid base64: {exc}") from exc
    return media_type, data


async def _fetch(client: httpx2.AsyncClient, url: str) -> tuple[str, str]:
    try:
        response = await client.get(url)
    except httpx2.HTTPError as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: could not fetch image {url!r}: {exc}") from exc
    if response.status_code != 200:
        raise BadRequestError(f"INVALID_ARGUMENT: could not fetch image {url!r}: HTTP {response.status_code}")
    if len(response.content) > MAX_IMAGE_BYTES:
        raise BadRequestError(f"INVALID_ARGUMENT: image {url!r} is larger than {MAX_IMAGE_BYTES} bytes")
    media_type = response.headers.get("content-type", "").split(";", 1)[0].strip()
    if not media_type.startswith("image/"):
        media_type = mimetypes.guess_type(url)[0] or "image/png"
    return media_type, base64.b64encode(response.content).decode()


async def inline_url_images(rows: Sequence[orm.Message], settings: Settings) -> None:
    """Replace every URL image source in the user `rows` by base64 data (in place). Raises BadRequestError."""
    sources = _url_images(rows)
    if not sources:
        return
    policy = policy_for(settings)
    async with guarded_client(policy, timeout_s=FETCH_TIMEOUT_S) as client:
        for source in sources:
            url = str(source["url"])
            if url.startswith("data:"):
                media_type, data = _from_data_url(url)
            else:
                await policy.check_url(url, "image url")
                media_type, data = await _fetch(client, url)
            detail = source.get("detail")
            source.clear()
            source.update({"type": "base64", "media_type": media_type, "data": data})
            if detail:
                source["detail"] = detail
