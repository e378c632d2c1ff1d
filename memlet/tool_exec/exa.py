"""Exa's API over plain HTTP, for the `web_search` and `fetch_webpage` tools.

Letta called Exa through the exa_py SDK; memlet sends the same requests itself: `POST <base>/search` and
`POST <base>/contents` with a camelCase JSON body and the key in `x-api-key`. Every request goes through the
outbound policy (`memlet.net`), under which the configured Exa base URL is always allowed; the key goes only there.

Exceptions: `ExaError` when Exa answered with an error status (its text quoted, as the SDK's ValueError did) or
with something that is not a list of results; `memlet.net.fetch.FetchError` when no answer came.
"""

from dataclasses import dataclass
from typing import Any

from memlet import __version__
from memlet.net.fetch import Fetcher, UnsendableRequestError
from memlet.net.outbound import OutboundPolicy

# Search with summaries can take Exa a while; a whole request ends after four times this (`Fetcher`).
EXA_TIMEOUT_S = 60.0
MAX_ANSWER_BYTES = 16 * 1024 * 1024
# How much of an error answer the message quotes.
ERROR_TEXT_CHARS = 1000


class ExaError(Exception):
    """Exa refused the request, or its answer cannot be read."""


@dataclass(frozen=True)
class ExaClient:
    """One key at one Exa base URL, under `policy`."""

    base_url: str
    api_key: str
    policy: OutboundPolicy

    async def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The results of one `/search` request (`body` already in Exa's camelCase)."""
        return await self._results("/search", body)

    async def contents(self, urls: list[str]) -> list[dict[str, Any]]:
        """The text of each page of `urls`, as Exa has it (`/contents` with `text: true`)."""
        return await self._results("/contents", {"urls": urls, "text": True})

    async def _results(self, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        headers = {"x-api-key": self.api_key, "User-Agent": f"memlet/{__version__}", "Accept": "application/json"}
        try:
            async with Fetcher(self.policy, EXA_TIMEOUT_S) as fetcher:
                answer = await fetcher.request(
                    "POST",
                    self.base_url.rstrip("/") + path,
                    headers=headers,
                    json_body=body,
                    max_bytes=MAX_ANSWER_BYTES,
                )
        except UnsendableRequestError as exc:  # a key with a newline or a non-ASCII character, a malformed base URL
            raise ExaError(f"the request cannot be sent: {exc}") from exc
        if answer.status >= 400:
            text = answer.body.decode("utf-8", "replace")[:ERROR_TEXT_CHARS]
            raise ExaError(f"Request failed with status code {answer.status}: {text}")
        try:
            data = answer.json()
        except ValueError as exc:
            raise ExaError(f"Exa's answer is not JSON: {exc}") from exc
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise ExaError("Exa's answer has no list of results")
        return [r for r in results if isinstance(r, dict)]
