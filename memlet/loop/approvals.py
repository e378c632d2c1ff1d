"""Human-in-the-loop: validate a client's answer to a pending approval request, then resume the loop with it.

The request itself is built by `step.approval_request`. When one LLM response mixed approval-gated and ungated
calls, the ungated ones were stored on the assistant row just before the request (`held_calls`); as in Letta
they run when the client answers, right after the approved ones. Cancelling a run with an approval pending
is in `cancel.py`.
"""

from collections.abc import Sequence
from typing import Any

from memlet.db import models as orm
from memlet.errors import BadRequestError, PendingApprovalError
from memlet.llm.types import ToolCall
from memlet.loop.agent_state import LoopState
from memlet.loop.response import DENIAL_PREFIX, StepContext, StepResult, parse_args, run_call
from memlet.loop.tool_dispatch import ToolOutcome, failure
from memlet.messages.content import tool_return_to_text
from memlet.messages.packing import pack_tool_return
from memlet.messages.requests import ApprovalCreate, ToolReturnCreate

NO_PENDING_APPROVAL = (
    "Cannot process approval response: No tool call is currently awaiting approval. Please send a regular "
    "message to interact with the agent."
)


def pending_approval(rows: Sequence[orm.Message]) -> orm.Message | None:
    """The approval request waiting at the end of the buffer, if any."""
    last = rows[-1] if rows else None
    return last if last is not None and last.role == "approval" and last.tool_calls else None


def held_calls(rows: Sequence[orm.Message]) -> list[dict[str, Any]]:
    """Ungated calls stored just before a pending approval request (mixed responses); they run on resume."""
    if len(rows) < 2 or pending_approval(rows) is None:
        return []
    before = rows[-2]
    asked = {c["id"] for c in rows[-1].tool_calls or []}
    if before.role != "assistant" or not before.tool_calls:
        return []
    return [c for c in before.tool_calls if c["id"] not in asked]


def approval_items(inputs: Sequence[Any]) -> list[Any] | None:
    """The approval answers and client tool returns among the inputs; None when there are none at all."""
    items: list[Any] = []
    found = False
    for item in inputs:
        if isinstance(item, ApprovalCreate):
            found = True
            items.extend(item.approvals or [])
        elif isinstance(item, ToolReturnCreate):
            found = True
            items.extend(item.tool_returns)
    return items if found else None


def check_approval(state: LoopState, items: list[Any] | None) -> orm.Message | None:
    """The pending request the inputs answer, or None for a normal message; raises on a mismatch."""
    request = pending_approval(state.messages)
    if items is None:
        if request is not None:
            raise PendingApprovalError(request.id)
        return None
    if request is None:
        raise BadRequestError(NO_PENDING_APPROVAL)
    expected = sorted(c["id"] for c in request.tool_calls or [])
    received = sorted(str(getattr(i, "tool_call_id", "")) for i in items)
    if expected != received:
        raise BadRequestError(f"Invalid tool call IDs. Expected '{expected}', but received '{received}'.")
    return request


def _client_return(ctx: StepContext, call_id: str, item: Any) -> tuple[dict[str, Any], ToolOutcome]:
    # Multi-part results (text and images, e.g. Letta Code's ViewImage) reach the model as text with a placeholder
    # per image, as Letta sends tool returns to chat-completion models.
    text = tool_return_to_text(item.tool_return) or ""
    outcome = ToolOutcome(item.status == "success", text, item.stdout or [], item.stderr or [])
    stored = {
        "type": "tool",
        "tool_call_id": call_id,
        "status": item.status,
        "stdout": item.stdout,
        "stderr": item.stderr,
        "func_response": pack_tool_return(outcome.success, text, timezone=ctx.agent.timezone),
    }
    return stored, outcome


async def resume_approval(
    ctx: StepContext, request: orm.Message, held: Sequence[dict[str, Any]], items: Sequence[Any]
) -> StepResult:
    """Execute approved calls, turn denials and client results into tool returns, then run the `held` calls.

    `items` are ApprovalReturn / ToolReturn models whose tool_call_ids exactly match the request's calls.
    Calls run here are never rule violations: the user approved them, or they were allowed when requested.
    """
    by_id = {getattr(item, "tool_call_id", None): item for item in items}
    approvals: list[dict[str, Any]] = []
    returns: list[orm.Message] = []
    names: list[str] = []
    for call in request.tool_calls or []:
        call_id, name = call["id"], call["function"]["name"]
        item = by_id[call_id]
        if getattr(item, "type", "") == "tool":
            stored, outcome = _client_return(ctx, call_id, item)
            approvals.append(stored)
        elif item.approve:
            approvals.append({"type": "approval", "tool_call_id": call_id, "approve": True, "reason": item.reason})
            args = parse_args(ToolCall(call_id, name, call["function"]["arguments"]))
            outcome = await run_call(ctx, name, args, [name])
        else:
            approvals.append({"type": "approval", "tool_call_id": call_id, "approve": False, "reason": item.reason})
            outcome = failure(f"{DENIAL_PREFIX}{item.reason}")
        ctx.solver.register_call(name)
        names.append(name)
        returns.append(ctx.tool_row(call_id, name, outcome))
    for call in held:
        call_id, name = call["id"], call["function"]["name"]
        args = parse_args(ToolCall(call_id, name, call["function"]["arguments"]))
        outcome = await run_call(ctx, name, args, [name])
        ctx.solver.register_call(name)
        names.append(name)
        returns.append(ctx.tool_row(call_id, name, outcome))
    first = next((a for a in approvals if a["type"] == "approval"), None)
    response = ctx.row(
        "approval",
        approvals=approvals,
        approve=first["approve"] if first else None,
        approval_request_id=first["tool_call_id"] if first else None,
        denial_reason=first["reason"] if first else None,
    )
    for row in (response, *returns):
        row.step_id = request.step_id
    terminal = any(ctx.solver.is_terminal(n) for n in names)
    return StepResult(
        rows=[response, *returns],
        should_continue=not terminal,
        stop_reason="tool_rule" if terminal else None,
        tools_called=names,
    )
