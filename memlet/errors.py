"""Domain errors that carry their own HTTP status, rendered in Letta's shapes by one handler (memlet.app).

    MemletError (500)
    ├── BadRequestError (400)           "INVALID_ARGUMENT: ..." style messages
    │   └── LimitExceededError (400)    a new block's value over its character limit
    │       └── UpdateLimitExceededError (422)  an update over the limit (Letta's SDK expects 422 there)
    ├── UnauthorizedError (401)
    ├── NotFoundError (404)             "<Entity> with ID <id> not found"
    ├── MethodNotAllowedError (405)
    ├── ConflictError (409)             duplicates, busy agents
    │   └── PendingApprovalError (409)  {"detail": {"code": "PENDING_APPROVAL", ...}}
    ├── GoneError (410)                 expired resources (a run's stream after 3 h)
    ├── UnprocessableError (422)        handler-raised validation
    ├── TooManyRequestsError (429)      every turn slot of this worker busy (Retry-After)
    ├── LLMError (500, {"error": {...}}) provider failures: timeout, rate limit, auth, 5xx
    ├── NotImplementedFeatureError (501) a backend memlet does not have (ClickHouse traces)
    └── ServiceUnavailableError (503)
        └── ShuttingDownError (503)     the server stopped taking turns (Retry-After)

Services raise these; routes never raise HTTPException for domain conditions.
"""

from typing import Any, ClassVar


class MemletError(Exception):
    status_code: ClassVar[int] = 500

    def __init__(self, message: str = "An unknown error occurred") -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"detail": self.message}

    def headers(self) -> dict[str, str] | None:
        return None


class BadRequestError(MemletError):
    status_code = 400


class ValueRefusal(BadRequestError):
    """A 400 that Letta raises as a plain ``ValueError`` (not one of its own errors), such as an approval answer
    that matches no pending request: a stream names it with Letta's generic "unknown error" message, its text
    in ``detail``."""


class LimitExceededError(BadRequestError):
    def __init__(self, label: str, limit: int, size: int) -> None:
        super().__init__(
            f"INVALID_ARGUMENT: Edit failed: Exceeds {limit} character limit (requested {size}) for block '{label}'."
        )
        self.limit = limit
        self.size = size


class UpdateLimitExceededError(LimitExceededError):
    """A block update over the limit through the REST API: Letta answers 422 (UnprocessableEntityError)."""

    status_code = 422


class UnauthorizedError(MemletError):
    status_code = 401

    def __init__(self, message: str = "Unauthorized") -> None:
        super().__init__(message)


class NotFoundError(MemletError):
    status_code = 404

    def __init__(self, entity: str, entity_id: str | None = None, *, message: str | None = None) -> None:
        text = message or (f"{entity} with ID {entity_id} not found" if entity_id else f"{entity} not found")
        super().__init__(text)
        self.entity = entity
        self.entity_id = entity_id


class MethodNotAllowedError(MemletError):
    status_code = 405


class ConflictError(MemletError):
    status_code = 409


class AgentBusyError(ConflictError):
    """Letta's ConversationBusyError: ``{"detail": ..., "run_id": <the active run>}`` (the agent's default thread
    is a conversation too)."""

    def __init__(self, agent_id: str, run_id: str | None = None) -> None:
        if run_id:
            message = (
                f"CONFLICT: Cannot send a new message: Another request (run_id={run_id}) is currently being "
                "processed for this conversation. Please wait for it to complete."
            )
        else:
            message = (
                "CONFLICT: Cannot send a new message: Another request is currently being processed for this "
                "conversation. Please wait for the current request to complete."
            )
        super().__init__(message)
        self.agent_id = agent_id
        self.run_id = run_id

    def body(self) -> dict[str, Any]:
        return {"detail": self.message, "run_id": self.run_id} if self.run_id else {"detail": self.message}

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": "1"}


class PendingApprovalError(ConflictError):
    def __init__(self, pending_request_id: str | None) -> None:
        super().__init__(
            "CONFLICT: Cannot send a new message: The agent is waiting for approval on a tool call. "
            "Please approve or deny the pending request before continuing."
        )
        self.pending_request_id = pending_request_id

    def body(self) -> dict[str, Any]:
        return {
            "detail": {
                "code": "PENDING_APPROVAL",
                "message": self.message,
                "pending_request_id": self.pending_request_id,
            }
        }


class GoneError(MemletError):
    status_code = 410


class UnprocessableError(MemletError):
    status_code = 422


class TooManyRequestsError(MemletError):
    status_code = 429

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after_s)}


class LLMError(MemletError):
    """A provider failure; ``error_type`` is one of Letta's llm_* error types."""

    status_code = 500
    error_type: str = "llm_error"
    # The message an HTTP answer shows instead of ``message`` (a call made with a BYOK key: Letta words some apart).
    http_message: str | None = None

    def __init__(
        self, message: str, *, error_type: str = "llm_error", status_code: int = 500, detail: str | None = None
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.http_status = status_code
        self.detail = detail or message

    def body(self) -> dict[str, Any]:
        message = self.http_message or self.message
        return {"error": {"type": self.error_type, "message": message, "detail": self.detail}}


class NotImplementedFeatureError(MemletError):
    """A route Letta answers 501 when a backend memlet does not have is missing (e.g. ClickHouse traces)."""

    status_code = 501


class ServiceUnavailableError(MemletError):
    status_code = 503


class ShuttingDownError(ServiceUnavailableError):
    def __init__(self) -> None:
        super().__init__("The server is shutting down and takes no new messages; retry shortly.")

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": "5"}
