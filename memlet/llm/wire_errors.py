"""How a call to an OpenAI-compatible endpoint fails, before ``memlet.llm.errors`` maps it to Letta's error types.

    ProviderHTTPError
    ├── ProviderConnectionError   "Connection error." (refused, reset, TLS, blocked by the outbound policy)
    │   └── ProviderTimeoutError  "Request timed out."
    ├── ProviderStatusError       a non-2xx answer: "Error code: 429 - <the body's error message>"
    ├── ProviderStreamError       an ``{"error": {...}}`` object inside a 200 stream
    └── ProviderResponseError     a body that is not the JSON it should be

The texts are the ones the openai SDK gave its exceptions, so errors read as they did before memlet spoke HTTP
itself: a status error names the code and, when the body is JSON with an error message, that message only.
"""

from collections.abc import Mapping
from typing import Any

from memlet.llm.json_text import InvalidJSON, decode_json

STREAM_ERROR_MESSAGE = "An error occurred during streaming"


class ProviderHTTPError(Exception):
    """A failed call to an OpenAI-compatible endpoint."""


class ProviderConnectionError(ProviderHTTPError):
    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class ProviderTimeoutError(ProviderConnectionError):
    def __init__(self) -> None:
        super().__init__("Request timed out.")


class ProviderStatusError(ProviderHTTPError):
    """A non-2xx answer; ``body`` is the decoded JSON's ``error`` object (or the JSON, or the text)."""

    def __init__(self, message: str, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.headers = headers


class ProviderStreamError(ProviderHTTPError):
    """An error object the provider sent inside a stream that had started with 200."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.body = body


class ProviderResponseError(ProviderHTTPError):
    """A 200 whose body (or a stream event of it) is not usable JSON."""


def status_error(status_code: int, text: str, headers: Mapping[str, str]) -> ProviderStatusError:
    """The error for a non-2xx answer with body ``text``."""
    message = f"Error code: {status_code}"
    text = text.strip()
    body: Any = text
    try:
        body = decode_json(text)
    except InvalidJSON:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else None
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return ProviderStatusError(message, status_code, data, headers)


def stream_error(data: object) -> ProviderStreamError | None:
    """The error a decoded stream event carries (``{"error": ...}``), if it carries one."""
    if not isinstance(data, dict) or not (error := data.get("error")):
        return None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = STREAM_ERROR_MESSAGE
    return ProviderStreamError(message, error)
