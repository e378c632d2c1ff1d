"""The anthropic SDK's exceptions read as memlet's LLM errors, and which of them are worth retrying.

A context overflow named in the text / 413   -> ContextWindowExceededError (400): the loop compacts and retries
APITimeoutError                              -> llm_timeout (504)
APIConnectionError, a stream broken off      -> llm_error (500), retried before the first event
RateLimitError (429)                         -> llm_rate_limit (429), retried
BadRequestError (400)                        -> llm_bad_request (400)
AuthenticationError (401)                    -> llm_authentication (401)
403, 404, 422                                -> llm_error (500), as Letta answers them
overloaded_error (529, 5xx or in-stream)     -> a 503 {"detail": ...} (Letta: LLMProviderOverloaded), retried
other 5xx, and other statuses or in-stream   -> llm_error (500), retried when transient
402 or a credit message (not on a 400)       -> llm_insufficient_credits (402)
"""

import anthropic
import httpx2

from memlet.errors import LLMError
from memlet.llm.errors import (
    LLMEmptyResponseError,
    ProviderError,
    ProviderOverloadedError,
    context_overflow,
    is_credit_message,
    llm_error,
)
from memlet.llm.retry import SDKErrors, parse_retry_after

# Letta's overflow texts for Anthropic (and Anthropic-compatible endpoints), whatever the status.
_OVERFLOW_HINTS = (
    "prompt is too long",
    "exceed context limit",
    "exceeds context",
    "total text bytes",
    "request_too_large",
    "request exceeds the maximum size",
)
_BAD_REQUEST_OVERFLOW_HINTS = ("context window exceeds limit",)
OVERLOADED_MESSAGE = "The LLM provider is overloaded. Please try again later."
# A stream the connection broke off mid-way (the SDK lets httpx's errors through while it reads a stream).
TRANSPORT_ERRORS = (httpx2.TransportError,)
_REFUSALS = {
    403: "PERMISSION_DENIED: Anthropic refused access",
    404: "NOT_FOUND: Anthropic does not know the model or path",
    422: "INVALID_ARGUMENT: Anthropic could not process the request",
}


def _overloaded(exc: Exception) -> bool:
    status = exc.status_code if isinstance(exc, anthropic.APIStatusError) else None
    return status == 529 or isinstance(exc, anthropic.OverloadedError) or "overloaded" in str(exc).lower()


def _overloaded_error(text: str) -> LLMError:
    return ProviderOverloadedError(OVERLOADED_MESSAGE, f"UNAVAILABLE: Anthropic API is overloaded: {text}")


def to_llm_error(exc: Exception) -> ProviderError:
    """Map an anthropic SDK exception to the error memlet raises (Letta's classification, our wording)."""
    text = str(exc)
    lowered = text.lower()
    status = exc.status_code if isinstance(exc, anthropic.APIStatusError) else None
    if status == 413 or any(hint in lowered for hint in _OVERFLOW_HINTS):
        return context_overflow(text)
    if isinstance(exc, anthropic.APITimeoutError):
        return llm_error("llm_timeout", f"TIMEOUT: Request to Anthropic timed out: {text}")
    if isinstance(exc, anthropic.APIConnectionError):
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Failed to connect to Anthropic: {text}")
    if isinstance(exc, TRANSPORT_ERRORS):
        detail = f"INTERNAL_SERVER_ERROR: The connection to Anthropic broke off during streaming: {text or repr(exc)}"
        return llm_error("llm_error", detail)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unparsable Anthropic response: {text}")
    if isinstance(exc, anthropic.RateLimitError):
        return llm_error("llm_rate_limit", f"RATE_LIMIT_EXCEEDED: Rate limited by Anthropic: {text}")
    if isinstance(exc, anthropic.BadRequestError):
        if any(hint in lowered for hint in _BAD_REQUEST_OVERFLOW_HINTS):
            return context_overflow(text)
        return llm_error("llm_bad_request", f"INVALID_ARGUMENT: Bad request to Anthropic: {text}")
    if isinstance(exc, anthropic.AuthenticationError):
        return llm_error("llm_authentication", f"UNAUTHENTICATED: Authentication with Anthropic failed: {text}")
    if status in _REFUSALS:
        return llm_error("llm_error", f"{_REFUSALS[status]}: {text}")
    if isinstance(exc, anthropic.InternalServerError) and (
        "overflow" in lowered or "upstream connect error" in lowered
    ):
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Anthropic upstream error (transient): {text}")
    if (
        status is not None
        and not isinstance(exc, anthropic.InternalServerError)
        and (status == 402 or is_credit_message(text))
    ):
        return llm_error("llm_insufficient_credits", f"PAYMENT_REQUIRED: Insufficient credits: {text}")
    if _overloaded(exc):
        return _overloaded_error(text)
    # Other statuses, and an error event inside a stream (sent with the stream's 200), or anything else.
    return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Anthropic API error: {text}")


def is_retryable(exc: Exception) -> bool:
    """Connection failures, 408/409/429 (but not exhausted credit), overloaded and 5xx answers."""
    if isinstance(exc, (anthropic.APIConnectionError, *TRANSPORT_ERRORS)):
        return True
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    if exc.status_code == 429:
        return not is_credit_message(str(exc))
    return exc.status_code in (408, 409) or exc.status_code >= 500 or _overloaded(exc)


def retry_after_seconds(exc: Exception) -> float | None:
    return parse_retry_after(exc.response.headers) if isinstance(exc, anthropic.APIStatusError) else None


ANTHROPIC_ERRORS = SDKErrors(
    (anthropic.AnthropicError, *TRANSPORT_ERRORS), is_retryable, retry_after_seconds, to_llm_error
)
