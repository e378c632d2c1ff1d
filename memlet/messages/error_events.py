"""How a failed run's error is named: the ``error_message`` a stream ends with and the run's ``metadata.error``.

Letta's streaming service names only timeouts, rate limits, rejected keys and empty responses in a stream; any
other LLM failure (a bad request, no credits, a provider error) is a plain ``llm_error`` with its generic message,
the cause in ``detail``. A run that streamed keeps that same error message as its ``metadata.error`` (Letta Code
reads its ``error_type`` and ``detail`` to decide whether to retry); a blocking run keeps the error's text, as
Letta's blocking routes store ``str(e)``.
"""

from typing import Any

from memlet.errors import LLMError, MemletError, ValueRefusal
from memlet.messages.schemas import LettaErrorMessage

GENERIC_LLM_ERROR = "An error occurred with the LLM request."
UNKNOWN_ERROR = "An unknown error occurred with the LLM streaming request."
_NAMED_IN_STREAMS = frozenset({"llm_timeout", "llm_rate_limit", "llm_authentication", "llm_empty_response"})


def error_message(run_id: str, error: BaseException, error_type: str | None = None) -> LettaErrorMessage:
    """An error as memlet names it: LLM errors keep their type and fixed message, anything else is
    ``internal_error`` (chat-completion error chunks show it; a Letta stream shows `stream_error`)."""
    if isinstance(error, LLMError):
        return LettaErrorMessage(run_id=run_id, error_type=error.error_type, message=error.message, detail=error.detail)
    detail = error_text(error)
    # Letta's stream shows the text of its own errors; a plain ValueError (or any other) gets the generic message.
    message = detail if isinstance(error, MemletError) and not isinstance(error, ValueRefusal) else UNKNOWN_ERROR
    return LettaErrorMessage(run_id=run_id, error_type=error_type or "internal_error", message=message, detail=detail)


def stream_error(run_id: str, error: BaseException, error_type: str | None = None) -> LettaErrorMessage:
    """The error event of a Letta stream (blocking sends keep the precise type)."""
    item = error_message(run_id, error, error_type)
    if isinstance(error, LLMError) and item.error_type not in _NAMED_IN_STREAMS:
        return item.model_copy(update={"error_type": "llm_error", "message": GENERIC_LLM_ERROR})
    return item


def error_text(error: BaseException) -> str:
    """The error's own text: an LLM error's provider detail, else its message (its repr when it has none)."""
    if isinstance(error, LLMError):
        return error.detail
    return str(error) or repr(error)


def run_error(run_id: str, error: BaseException, error_type: str | None, *, streamed: bool) -> Any:
    """A failed run's ``metadata.error``: the stream's error message when the run streamed, else the error's text."""
    if not streamed:
        return error_text(error)
    return stream_error(run_id, error, error_type).model_dump(mode="json")
