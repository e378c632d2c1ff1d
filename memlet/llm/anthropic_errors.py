"""The anthropic SDK's exceptions read as memlet's LLM errors, and which of them are worth retrying.

APITimeoutError                      -> llm_timeout (504)
APIConnectionError                   -> llm_error (500), retried
"prompt is too long" / 413           -> ContextWindowExceededError (400): the loop compacts and retries
RateLimitError (429)                 -> llm_rate_limit (429), retried
AuthenticationError (401)            -> llm_authentication (401)
402 or a credit message              -> llm_insufficient_credits (402)
overloaded_error (529, or in-stream) -> llm_error with status 503 (Letta: LLMProviderOverloaded, 503), retried
other 5xx                            -> llm_error (500), retried
other 4xx                            -> llm_bad_request (400)
"""

import anthropic

from memlet.errors import LLMError
from memlet.llm.errors import CREDIT_HINTS, ContextWindowExceededError, LLMEmptyResponseError, ProviderError, llm_error
from memlet.llm.retry import SDKErrors, parse_retry_after

_OVERFLOW_HINTS = ("prompt is too long", "exceed context limit", "exceeds the context window")
OVERLOADED_MESSAGE = "The LLM provider is overloaded. Please try again later."


def _overloaded(exc: Exception) -> bool:
    status = exc.status_code if isinstance(exc, anthropic.APIStatusError) else None
    return status == 529 or isinstance(exc, anthropic.OverloadedError) or "overloaded" in str(exc).lower()


def to_llm_error(exc: Exception) -> ProviderError:
    """Map an anthropic SDK exception to the error memlet raises (Letta's classification, our wording)."""
    text = str(exc)
    lowered = text.lower()
    if isinstance(exc, anthropic.APITimeoutError):
        return llm_error("llm_timeout", f"TIMEOUT: Request to Anthropic timed out: {text}")
    if isinstance(exc, anthropic.APIConnectionError):
        return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Failed to connect to Anthropic: {text}")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMEmptyResponseError(f"INTERNAL_SERVER_ERROR: Unparsable Anthropic response: {text}")
    status = exc.status_code if isinstance(exc, anthropic.APIStatusError) else None
    if status == 413 or any(hint in lowered for hint in _OVERFLOW_HINTS):
        return ContextWindowExceededError(f"CONTEXT_WINDOW_EXCEEDED: The LLM context window was exceeded: {text}")
    if isinstance(exc, anthropic.RateLimitError):
        return llm_error("llm_rate_limit", f"RATE_LIMIT_EXCEEDED: Rate limited by Anthropic: {text}")
    if isinstance(exc, anthropic.AuthenticationError):
        return llm_error("llm_authentication", f"UNAUTHENTICATED: Authentication with Anthropic failed: {text}")
    if _overloaded(exc):
        detail = f"UNAVAILABLE: Anthropic API is overloaded: {text}"
        return LLMError(OVERLOADED_MESSAGE, error_type="llm_error", status_code=503, detail=detail)
    if status is not None:
        if status == 402 or any(hint in lowered for hint in CREDIT_HINTS):
            return llm_error("llm_insufficient_credits", f"PAYMENT_REQUIRED: Insufficient credits: {text}")
        if status >= 500:
            return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Anthropic API error: {text}")
        if status >= 400:
            return llm_error("llm_bad_request", f"INVALID_ARGUMENT: Bad request to Anthropic: {text}")
    # An error event inside a stream (sent with the stream's 200), or anything else the SDK raises.
    return llm_error("llm_error", f"INTERNAL_SERVER_ERROR: Anthropic API error: {text}")


def is_retryable(exc: Exception) -> bool:
    """Connection failures, 408/409/429 (but not exhausted credit), overloaded and 5xx answers."""
    if isinstance(exc, anthropic.APIConnectionError):
        return True
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    if exc.status_code == 429:
        return not any(hint in str(exc).lower() for hint in CREDIT_HINTS)
    return exc.status_code in (408, 409) or exc.status_code >= 500 or _overloaded(exc)


def retry_after_seconds(exc: Exception) -> float | None:
    return parse_retry_after(exc.response.headers) if isinstance(exc, anthropic.APIStatusError) else None


ANTHROPIC_ERRORS = SDKErrors(anthropic.AnthropicError, is_retryable, retry_after_seconds, to_llm_error)
