"""A stored message as a plain, read-only row: what the loop reads of its in-context buffer every step.

The loop reads every message of the window on every step and writes none of them back, so it gets them as
`MessageRow` tuples from a Core select (`MessageRepository.in_context`) instead of ORM entities: no identity map,
no instrumented attributes, no per-row state. New rows are still `orm.Message` (the inserter's input);
`MessageLike` is what code reading either kind may rely on.
"""

from datetime import datetime
from typing import Any, NamedTuple, Protocol

from memlet.db import models as orm


class MessageRow(NamedTuple):
    """Every column of `messages`, read-only (the fields are the ORM attribute names)."""

    id: str
    agent_id: str
    sequence_id: int
    role: str
    content: list[dict[str, Any]] | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_returns: list[dict[str, Any]] | None
    name: str | None
    model: str | None
    step_id: str | None
    run_id: str | None
    otid: str | None
    sender_id: str | None
    group_id: str | None
    batch_item_id: str | None
    conversation_id: str | None
    is_err: bool | None
    approval_request_id: str | None
    approve: bool | None
    denial_reason: str | None
    approvals: list[dict[str, Any]] | None
    created_at: datetime
    updated_at: datetime
    created_by_id: str | None
    last_updated_by_id: str | None
    organization_id: str

    @classmethod
    def of(cls, message: orm.Message) -> "MessageRow":
        """The row of an entity the loop just wrote (its sequence_id and timestamps set by the insert)."""
        return cls._make(getattr(message, field) for field in cls._fields)


class MessageLike(Protocol):
    """The fields shared by a `MessageRow` and an `orm.Message` that converting and inspecting rows read."""

    @property
    def id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def content(self) -> list[dict[str, Any]] | None: ...
    @property
    def tool_calls(self) -> list[dict[str, Any]] | None: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def tool_returns(self) -> list[dict[str, Any]] | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def step_id(self) -> str | None: ...
    @property
    def approvals(self) -> list[dict[str, Any]] | None: ...
