"""Letta's LLM error types, and the mapping from a failed OpenAI-compatible call (``memlet.llm.wire_errors``) onto them.

Every provider failure becomes one of these, with Letta's ``error_type``, status and fixed message:

    LLMError        llm_timeout (504) | llm_rate_limit (429) | llm_authentication (401) |
    │               llm_insufficient_credits (402) | llm_bad_request (400) | llm_error (500: a provider's 5xx,
    │               a refused connection, and its 403, 404 and 422, as Letta answers them)
    ├── LLMEmptyResponseError   llm_empty_response: nothing usable came back (stop reason invalid_llm_response)
    └── ProviderOverloadedError a plain 503 {"detail": ...}, as Letta answers an overloaded provider
    ContextWindowExceededError (BadRequestError, 400): the prompt does not fit; the loop compacts and retries
"""

from typing import Any

from memlet.errors import BadRequestError, LLMError
from memlet.llm.wire_errors import (
    ProviderConnectionError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from memlet.net.fetch import UnsendableRequestError, parse_url

# error_type -> (HTTP status, the user-facing message Letta puts in {"error": {"message": ...}}).
_ERROR_TYPES: dict[str, tuple[int, str]] = {
    "llm_timeout": (504, "The LLM request timed out. Please try again."),
    "llm_rate_limit": (
        429,
        "Rate limit exceeded for LLM model provider. Please wait before making another request.",
    ),
    "llm_authentication": (401, "Authentication failed with the LLM model provider."),
    "llm_insufficient_credits": (402, "Insufficient credits for LLM request. Please check your account."),
    "llm_bad_request": (400, "The request to the LLM model provider was invalid."),
    "llm_error": (500, "An error occurred with the LLM request."),
    "llm_empty_response": (500, "LLM returned an empty response."),
}
# Letta's `is_context_window_overflow_message`, lowercased.
_CONTEXT_OVERFLOW_HINTS = (
    "exceeds the context window",
    "maximum context length",
    "context_length_exceeded",
    "input tokens exceed the configured limit",
    "exceeds the maximum allowed input length",
)
# Letta's `is_insufficient_credits_message` (plus OpenAI's `insufficient_quota` code). Also tells an exhausted quota
# (not worth retrying) from a passing rate limit in ``memlet.llm.retry``.
CREDIT_HINTS = (
    "insufficient credits",
    "requires more credits",
    "add more credits",
    "exceeded your current quota",
    "insufficient_quota",
    "you've exceeded your budget",
    "can only afford",
)


def is_credit_message(text: str) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in CREDIT_HINTS) or ("billing" in lowered and "hard limit" in lowered)


def is_overflow_message(text: str) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in _CONTEXT_OVERFLOW_HINTS)


# Letta's HTTP messages for a call made with the user's own key (a BYOK provider's); streams keep the usual ones.
_BYOK_MESSAGES = {
    "llm_rate_limit": (
        "Rate limit exceeded on your API key. Please check your provider's rate limits and billing, "
        "or reduce request frequency."
    ),
    "llm_insufficient_credits": "Insufficient credits on your API key. Please add credits with your LLM provider.",
}
BYOK_MARK = " [BYOK]"


def mark_byok(error: LLMError) -> None:
    """An error of a call made with a BYOK provider's key, as Letta reads it: its detail ends with " [BYOK]", and
    a rate limit or exhausted credits answers with the messages that point at the user's own key."""
    if not error.detail.endswith(BYOK_MARK):
        error.detail += BYOK_MARK
    error.http_message = _BYOK_MESSAGES.get(error.error_type)


class LLMEmptyResponseError(LLMError):
    """The provider answered with neither text nor tool calls, or with a body we cannot parse."""

    def __init__(self, detail: str) -> None:
        status, message = _ERROR_TYPES["llm_empty_response"]
        super().__init__(message, error_type="llm_empty_response", status_code=status, detail=detail)


class ProviderOverloadedError(LLMError):
    """Letta's LLMProviderOverloaded: its API answers it with a plain 503 ``{"detail": ...}`` (a handler of its own,
    not the ``llm_*`` error shape); a stream names it ``llm_error``, like any other LLM error."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message, error_type="llm_error", status_code=503, detail=detail)

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail}


class ContextWindowExceededError(BadRequestError):
    """The prompt is larger than the model's context window (Letta answers these with a plain 400)."""


# Everything ``to_llm_error`` can produce.
ProviderError = LLMError | ContextWindowExceededError


def llm_error(error_type: str, detail: str) -> LLMError:
    """An ``LLMError`` of one of Letta's ``llm_*`` types, with Letta's fixed message for that type."""
    status, message = _ERROR_TYPES[error_type]
    return LLMError(message, error_type=error_type, status_code=status, detail=detail)


def to_llm_error(exc: Exception) -> ProviderError:
    """Map a failed OpenAI-compatible call to the error memlet raises (Letta's classification, our wording).

    Timeouts, connection failures and unusable bodies first. An error inside a stream (no status): a context
    overflow, exhausted credits, else a bad request. By status: 429 rate limit; 400 a context overflow (by its
    code or text) or a bad request; 401 authentication; 403, 404 and 422 a provider error (Letta's 500 for these);
    413 a context overflow; 402 (or a credit message) credits; other 5xx a provider error; other 4xx a bad request.
    """
    text = str(exc)
    if isinstance(exc, ProviderTimeoutError):
        return llm_error("llm_timeout", f"TIMEOUT: Request to the LLM provider timed out: {text}")
    if isinstance(exc, ProviderConnectionError):
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Failed to connect to the LLM provider: {text}")
    if isinstance(exc, ProviderResponseError):
        return LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unparsable LLM response: {text}")
    if not isinstance(exc, ProviderStatusError):  # an error event inside a stream, or anything else
        if is_overflow_message(text):
            return context_overflow(text)
        if is_credit_message(text):
            return llm_error("llm_insufficient_credits", f"PAYMENT_REQUIRED: Insufficient credits: {text}")
        return llm_error("llm_bad_request", f"INVALID_ARGUMENT: LLM provider error: {text}")
    status = exc.status_code
    if status == 429:
        return llm_error("llm_rate_limit", f"RATE_LIMIT_EXCEEDED: Rate limited by the LLM provider: {text}")
    if status == 400:
        code = exc.body.get("code") if isinstance(exc.body, dict) else None
        if code == "context_length_exceeded" or is_overflow_message(text):
            return context_overflow(text)
        if isinstance(exc.body, str) and "<html" in exc.body.lower():
            text += " (an HTML page, not an OpenAI-compatible error: is the endpoint URL an OpenAI-compatible API?)"
        return llm_error("llm_bad_request", f"INVALID_ARGUMENT: Bad request to the LLM provider: {text}")
    if status == 401:
        return llm_error("llm_authentication", f"UNAUTHENTICATED: Authentication failed: {text}")
    if status in _REFUSALS:
        return llm_error("llm_error", f"{_REFUSALS[status]}: {text}")
    if status == 413:
        return context_overflow(text)
    if status == 402 or is_credit_message(text):
        return llm_error("llm_insufficient_credits", f"PAYMENT_REQUIRED: Insufficient credits: {text}")
    if status >= 500:
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: LLM provider error: {text}")
    return llm_error("llm_bad_request", f"INVALID_ARGUMENT: Bad request to the LLM provider: {text}")


# Statuses Letta reads as their own LLM errors, which its API answers as a plain 500 llm_error.
_REFUSALS = {
    403: "PERMISSION_DENIED: The LLM provider refused access",
    404: "NOT_FOUND: The LLM provider does not know the model or path",
    422: "INVALID_ARGUMENT: The LLM provider could not process the request",
}


def context_overflow(text: str) -> ContextWindowExceededError:
    """A provider's answer that the prompt does not fit (the loop compacts and retries)."""
    return ContextWindowExceededError(f"CONTEXT_WINDOW_EXCEEDED: The LLM context window was exceeded: {text}")


def check_sendable_endpoint(base_url: str) -> None:
    """Letta's bad-request error for an endpoint URL nothing can be sent to (e.g. a control character: it resolves
    nowhere, so the outbound check lets it be stored). Checked before a chat or embedding client is built, so the
    turn or the request fails with it instead of a 500."""
    try:
        parse_url(base_url)
    except UnsendableRequestError as exc:
        raise llm_error("llm_bad_request", f"INVALID_ARGUMENT: The LLM endpoint URL cannot be used: {exc}") from exc
