"""The `letta_builtin` web tools, `fetch_webpage` and `web_search`, as Letta 0.16.8 runs them.

Both use Exa when the agent has an `EXA_API_KEY` secret or the server has `MEMLET_EXA_API_KEY` (Letta's
`EXA_API_KEY`): `web_search` needs it, `fetch_webpage` asks Exa for the page's text first and otherwise downloads
the page itself (`memlet.tool_exec.webpage`). Their arguments, texts and result shapes are Letta's; what differs
is that memlet downloads a page only under the outbound policy (Letta fetched any URL).

A failure Letta raised is a `WebToolError`: the model reads it as Letta's "Error executing function <tool>:
<exception type>: <message>". A failed search is not an error: as in Letta, the tool returns `{"query", "error"}`.
"""

import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from memlet.config import Settings
from memlet.net.fetch import FetchError
from memlet.net.outbound import OutboundPolicy, policy_for
from memlet.tool_exec.exa import ExaClient, ExaError
from memlet.tool_exec.webpage import PageError, PageRefusedError, download, page_text

log = logging.getLogger(__name__)

EXA_KEY_SECRET = "EXA_API_KEY"
NO_EXA_KEY = "EXA_API_KEY is not set in environment or on agent_state tool execution environment variables."
# Letta caps an error text at this many characters (MAX_ERROR_MESSAGE_CHAR_LIMIT).
MAX_ERROR_CHARS = 1000
# Exa's content options Letta asks for with every search: a few highlights and a summary per result.
HIGHLIGHT_SENTENCES = 2
HIGHLIGHTS_PER_URL = 3


class WebToolError(Exception):
    """A web tool failed the way Letta's raised `kind` (an exception type's name) with this message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def model_text(self, tool_name: str) -> str:
        return f"Error executing function {tool_name}: {self.kind}: {self}"[:MAX_ERROR_CHARS]


@dataclass(frozen=True)
class WebAccess:
    """What the web tools may use: the outbound policy, and Exa when a key is set."""

    policy: OutboundPolicy
    exa: ExaClient | None


def web_access(settings: Settings, secrets: dict[str, str]) -> WebAccess:
    """The agent's `EXA_API_KEY` secret first, then the server's key, as Letta picks one."""
    policy = policy_for(settings)
    key = secrets.get(EXA_KEY_SECRET) or (settings.exa_api_key.get_secret_value() if settings.exa_api_key else "")
    return WebAccess(policy, ExaClient(settings.exa_base_url, key, policy) if key else None)


async def fetch_webpage(web: WebAccess, url: str) -> str:
    """Exa's text of the page (as JSON: title, published_date, author, text) or, without Exa or when Exa has
    nothing, the page downloaded here as markdown."""
    if not isinstance(url, str):
        raise WebToolError("TypeError", f"url must be a string, not {type(url).__name__}")
    try:
        scheme = urlsplit(url).scheme
    except ValueError as exc:
        raise WebToolError("ValueError", str(exc)) from None
    if scheme.lower() not in ("http", "https"):
        raise WebToolError(
            "ValueError",
            f"Invalid URL scheme '{scheme}'. Only 'http' and 'https' URLs are supported. "
            "Local file paths (file://) and other protocols cannot be fetched.",
        )
    if web.exa is not None:
        found = await _exa_page(web.exa, url)
        if found is not None:
            return found
    try:
        return await page_text(await download(web.policy, url))
    except PageRefusedError as exc:
        raise WebToolError("PermissionError", str(exc)) from None
    except PageError as exc:
        raise WebToolError("Exception", f"Error fetching webpage: {exc}") from None
    except Exception as exc:  # the HTML parser failing on a page: the model reads it, the run goes on
        log.warning("fetch_webpage could not read %s", url, exc_info=True)
        raise WebToolError("Exception", f"Unexpected error: {exc}") from None


async def _exa_page(exa: ExaClient, url: str) -> str | None:
    try:
        results = await exa.contents([url])
    except ExaError as exc:
        raise WebToolError("ValueError", str(exc)) from None
    except FetchError as exc:
        raise WebToolError("ConnectionError", str(exc)) from None
    if not results:
        return None
    first = results[0]
    fields = {
        "title": first.get("title"),
        "published_date": first.get("publishedDate"),
        "author": first.get("author"),
        "text": first.get("text"),
    }
    return json.dumps(fields)


async def web_search(
    web: WebAccess,
    query: str,
    num_results: int = 10,
    category: str | None = None,
    include_text: bool | None = False,
    include_domains: list[str] | None = None,
    exclude_domains: list[str] | None = None,
    start_published_date: str | None = None,
    end_published_date: str | None = None,
    user_location: str | None = None,
) -> str:
    """Exa's search (type auto) with highlights and a summary per result, and the page text when asked."""
    if not isinstance(query, str):
        raise WebToolError("TypeError", f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        return json.dumps({"error": "Query cannot be empty", "query": query})
    if web.exa is None:
        raise WebToolError("ValueError", NO_EXA_KEY)
    if isinstance(num_results, bool) or not isinstance(num_results, int):
        raise WebToolError("TypeError", f"num_results must be an integer, not {type(num_results).__name__}")
    filters: dict[str, Any] = {
        "category": category,
        "include_domains": include_domains,
        "exclude_domains": exclude_domains,
        "start_published_date": start_published_date,
        "end_published_date": end_published_date,
        "user_location": user_location,
    }
    given = {name: value for name, value in filters.items() if value}
    # A null include_text is left out, as the SDK drops every None.
    text = {"text": include_text} if include_text is not None else {}
    invalid = _invalid_option({**given, **text})
    if invalid:
        return json.dumps({"query": query, "error": f"Search failed: {invalid}"})
    body: dict[str, Any] = {"query": query, "numResults": min(max(num_results, 1), 100), "type": "auto"}
    body.update({_camel(name): value for name, value in given.items()})
    body["contents"] = {
        **text,
        "highlights": {"numSentences": HIGHLIGHT_SENTENCES, "highlightsPerUrl": HIGHLIGHTS_PER_URL, "query": query},
        "summary": {"query": f"Summarize the key information from this content related to: {query}"},
    }
    try:
        results = await web.exa.search(body)
    except (ExaError, FetchError) as exc:
        return json.dumps({"query": query, "error": f"Search failed: {exc}"})
    shaped = [_search_result(r, include_text) for r in results]
    return json.dumps({"query": query, "results": shaped}, indent=2, ensure_ascii=False)


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def _invalid_option(options: dict[str, Any]) -> str | None:
    """What Exa's SDK refused before sending: an option of the wrong type."""
    for name, value in options.items():
        if name.endswith("domains"):
            ok = isinstance(value, list) and all(isinstance(d, str) for d in value)
            expected = "a list of strings"
        elif name == "text":
            ok, expected = isinstance(value, bool), "a boolean"
        else:
            ok, expected = isinstance(value, str), "a string"
        if not ok:
            return f"Invalid value for option '{name}': {value!r} (expected {expected})"
    return None


def _search_result(result: dict[str, Any], include_text: bool | None) -> dict[str, Any]:
    shaped = {
        "title": result.get("title"),
        "url": result.get("url"),
        "published_date": result.get("publishedDate"),
        "author": result.get("author"),
    }
    if include_text and result.get("text"):
        shaped["text"] = result["text"]
    for extra in ("highlights", "summary"):
        if result.get(extra):
            shaped[extra] = result[extra]
    return shaped


WEB_TOOLS = {"fetch_webpage": fetch_webpage, "web_search": web_search}
