"""Human-in-the-loop: validate a client's answer to a pending approval request, then resume the loop with it.

The request itself is built by `step.approval_request`. When one LLM response mixed approval-gated and ungated
calls, the ungated ones were stored on the assistant row just before the request (`held_calls`); as in Letta
they run when the client answers, right after the approved ones. Cancelling a run with an approval pending
is in `cancel.py`.
"""

from collections.abc import Sequence
from typing import Any

from memlet.db import models as orm
from memlet.db.message_row import MessageLike
from memlet.errors import PendingApprovalError, ValueRefusal
from memlet.llm.chat_format import is_v2
from memlet.llm.types import ToolCall
from memlet.loop.agent_state import LoopState
from memlet.loop.call_args import parse_args, pop_heartbeat
from memlet.loop.response import (
    DENIAL_PREFIX,
    HEARTBEAT_DENIED,
    StepContext,
    StepResult,
    answered_decision,
    ending,
    tool_returns_row,
)
from memlet.loop.tool_batch import PlannedCall, run_planned
from memlet.loop.tool_dispatch import ToolOutcome, failure
from memlet.messages.content import tool_return_to_text
from memlet.messages.packing import pack_tool_return
from memlet.messages.requests import ApprovalCreate, MessageCreate, ToolReturnCreate

NO_PENDING_APPROVAL = (
    "Cannot process approval response: No tool call is currently awaiting approval. Please send a regular "
    "message to interact with the agent."
)
NO_ANSWERS = "Invalid approval response. Approval response message does not contain any approvals."
# What the model reads when a client re-sends answers that were already applied (memlet's own words).
KEEP_ALIVE = MessageCreate(
    role="user",
    content="<system-alert>Automatic keep-alive: the tool results above were already received. Continue from "
    "where you left off.</system-alert>",
)
RECENT = 10  # how far back an already applied answer is looked for, as in Letta


def pending_approval(rows: Sequence[MessageLike]) -> MessageLike | None:
    """The approval request waiting at the end of the buffer, if any."""
    last = rows[-1] if rows else None
    return last if last is not None and last.role == "approval" and last.tool_calls else None


def held_calls(rows: Sequence[MessageLike]) -> list[dict[str, Any]]:
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


def answers_group_id(inputs: Sequence[Any]) -> str | None:
    """The group id the approval answers carry (a sleeptime manager's inputs are its group's), if any."""
    for item in inputs:
        if isinstance(item, ApprovalCreate | ToolReturnCreate) and item.group_id:
            return item.group_id
    return None


def already_applied(rows: Sequence[MessageLike], items: Sequence[Any]) -> bool:
    """Whether one tool row among the last RECENT rows holds the returns of exactly the calls the items answer, as
    Letta checks a retry: a retry answering only some of them (or others beside them) is not one.

    Beyond Letta: the calls an answer covered are those its stored answer (the row before the tool row, of the same
    step) lists, so a tool row that also holds the returns of ungated calls run beside the answered ones still
    matches (Letta compared with every return of the row and refused that retry)."""
    wanted = {str(getattr(i, "tool_call_id", "")) for i in items}
    if not wanted:
        return False
    for index in range(max(0, len(rows) - RECENT), len(rows)):
        row = rows[index]
        if row.role != "tool":
            continue
        returned = {str(r.get("tool_call_id")) for r in row.tool_returns or []}
        answer = rows[index - 1] if index > 0 else None
        answered = returned
        if answer is not None and _is_answer_of(answer, row):
            answered = {str(a.get("tool_call_id")) for a in answer.approvals or []}
        if wanted == answered and wanted <= returned:
            return True
    return False


def _is_answer_of(row: MessageLike, tool_row: MessageLike) -> bool:
    """Whether `row` is the stored approval answer whose calls `tool_row` answered (same step, just before it)."""
    return bool(row.role == "approval" and not row.tool_calls and row.approvals and row.step_id == tool_row.step_id)


def only_system_and_summary(rows: Sequence[MessageLike]) -> bool:
    """Whether the buffer holds nothing but the system prompt and compaction summaries (after a full compaction
    or with autoclear): then answers already applied are looked for in the whole history, as Letta does."""
    return all(row.role in ("system", "summary") for row in rows)


def check_approval(
    state: LoopState, items: list[Any] | None, latest_tool: Sequence[MessageLike] = ()
) -> MessageLike | None:
    """The pending request the inputs answer, or None for a normal message (or for answers already applied,
    which Letta takes as a keep-alive); raises on a mismatch. `latest_tool`: the agent's newest tool row in its
    whole history (after the stored answer it came from, if any), read when `only_system_and_summary` holds."""
    request = pending_approval(state.messages)
    if items is None:
        if request is not None:
            raise PendingApprovalError(request.id)
        return None
    if request is None:
        if already_applied(state.messages, items):
            return None  # a retry of answers already applied: the loop carries on with a keep-alive instead
        if latest_tool and already_applied(latest_tool, items):
            return None  # the same, when a compaction took the answered calls out of the context
        raise ValueRefusal(NO_PENDING_APPROVAL)
    if not items:
        raise ValueRefusal(NO_ANSWERS)
    expected = [c["id"] for c in request.tool_calls or []]  # as Letta words the error: both in their own order
    received = [str(getattr(i, "tool_call_id", "")) for i in items]
    if len(expected) == 1 and received == [request.id]:
        # The deprecated single-call form names the request's message, not its call (older SDKs): as Letta, that
        # answers the one call it holds.
        items[0].tool_call_id = expected[0]
        return request
    if set(expected) != set(received):
        raise ValueRefusal(f"Invalid tool call IDs. Expected '{expected}', but received '{received}'.")
    return request


def _client_return(ctx: StepContext, call_id: str, item: Any) -> tuple[dict[str, Any], ToolOutcome]:
    # A result in parts (text and images, e.g. Letta Code's ViewImage) is kept as given, as Letta keeps it: Anthropic
    # models see its images, chat-completion models its text with a placeholder per image (not packed).
    outcome = ToolOutcome(item.status == "success", item.tool_return, item.stdout or [], item.stderr or [])
    if isinstance(item.tool_return, list):
        outcome.parts = [part.model_dump(mode="json") for part in item.tool_return]
        outcome.value = tool_return_to_text(item.tool_return) or ""
        response: Any = outcome.parts
    else:
        response = pack_tool_return(outcome.success, item.tool_return or "", timezone=ctx.agent.timezone)
    stored = {
        "type": "tool",
        "tool_call_id": call_id,
        "status": item.status,
        "stdout": item.stdout,
        "stderr": item.stderr,
        "func_response": response,
    }
    return stored, outcome


def _call_args(call: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """A stored call's arguments without the heartbeat flag, and that flag (V2 stores it on waiting calls)."""
    args = parse_args(ToolCall(call["id"], call["function"]["name"], call["function"]["arguments"]))
    heartbeat = pop_heartbeat(args)
    return args, heartbeat


async def resume_approval(
    ctx: StepContext,
    request: MessageLike,
    held: Sequence[dict[str, Any]],
    items: Sequence[Any],
    group_id: str | None = None,
) -> tuple[orm.Message, StepResult]:
    """Execute approved calls, turn denials and client results into tool returns, then run the `held` calls.

    Returns the approval-response row (the client's input: stored before the step's rows, not part of the
    response, as in Letta) and the step: one tool row holding every call's return, in Letta's order.

    `items` are ApprovalReturn / ToolReturn models whose tool_call_ids exactly match the request's calls.
    Calls run here are never rule violations: the user approved them, or they were allowed when requested.
    Whether the loop goes on follows Letta per agent type: V2 as after any call (its rules, else the heartbeat
    the model asked for), and always after a denial, with its own heartbeat; V3 when any executed call is not
    terminal, or when any call was denied or answered by the client. The answers are the loop's first step: on a
    blocking V2 send allowed only one, executed calls end the turn with max_steps, as Letta's V2 `step()` does.
    """
    v2 = is_v2(ctx.agent.agent_type)
    by_id = {getattr(item, "tool_call_id", None): item for item in items}
    sent_at = {call_id: index for index, call_id in enumerate(by_id)}
    approvals: list[dict[str, Any]] = []
    outcomes: list[tuple[tuple[int, int], ToolCall, ToolOutcome]] = []
    names: list[str] = []
    decisions: list[tuple[bool, str | None]] = []
    asked_heartbeat = False
    every = [*(request.tool_calls or []), *held]
    answered = [by_id.get(call["id"]) for call in every]  # None: a held call, which runs as allowed when requested
    parsed = [_call_args(call) for call in every]
    runs = [item is None or (getattr(item, "type", "") != "tool" and item.approve) for item in answered]
    # The approved and held calls all run first (side by side where their tools allow it, as in Letta), then each
    # answer is applied in call order.
    planned = [
        PlannedCall(c["function"]["name"], a, [c["function"]["name"]])
        for c, (a, _), r in zip(every, parsed, runs, strict=True)
        if r
    ]
    ran = iter(await run_planned(ctx, planned))
    for position, (call, item, (_, heartbeat), runs_here) in enumerate(zip(every, answered, parsed, runs, strict=True)):
        call_id, name = call["id"], call["function"]["name"]
        asked_heartbeat = asked_heartbeat or heartbeat
        if runs_here:
            if item is not None:
                approvals.append({"type": "approval", "tool_call_id": call_id, "approve": True, "reason": item.reason})
            outcome = next(ran)
            ctx.solver.register_call(name)  # only calls that ran count for the rules (not denied or client ones)
            # After registering, as Letta does: a required-before-exit tool that just ran is no longer missing.
            # The answers are the loop's first step: on a blocking V2 send allowed one step, it is also the last.
            last = v2 and ctx.final_step
            decisions.append((False, None) if last else answered_decision(ctx, name, heartbeat, outcome.success, v2=v2))
            order = (2, position)
        elif getattr(item, "type", "") == "tool":
            stored, outcome = _client_return(ctx, call_id, item)
            approvals.append(stored)
            decisions.append(
                (True, None) if not v2 else answered_decision(ctx, name, heartbeat, outcome.success, v2=v2)
            )
            order = (0, sent_at[call_id])
        else:
            assert item is not None
            approvals.append({"type": "approval", "tool_call_id": call_id, "approve": False, "reason": item.reason})
            outcome = failure(f"{DENIAL_PREFIX}{item.reason}")
            decisions.append((True, HEARTBEAT_DENIED if v2 else None))
            order = (1, position)
        names.append(name)
        outcomes.append((order, ToolCall(call_id, name, call["function"]["arguments"]), outcome))
    # As Letta orders them: the answers as the client sent them; the returns the client's first, then the denials,
    # then the calls that ran (approved, then held), each in call order.
    approvals.sort(key=lambda answer: sent_at[answer["tool_call_id"]])
    outcomes.sort(key=lambda entry: entry[0])
    first = next((a for a in approvals if a["type"] == "approval"), None)
    response = ctx.row(
        "approval",
        approvals=approvals,
        approve=first["approve"] if first else None,
        approval_request_id=first["tool_call_id"] if first else None,
        denial_reason=first["reason"] if first else None,
        group_id=group_id,
    )
    returns = tool_returns_row(ctx, [(call, outcome) for _, call, outcome in outcomes])
    for row in (response, returns):
        row.step_id = request.step_id
    step = StepResult(rows=[returns], tools_called=names)
    step.should_continue = any(go for go, _ in decisions)
    if not step.should_continue:
        if v2 and ctx.final_step:  # a blocking V2 send's last step: max_steps, whatever the rules say
            step.stop_reason = "max_steps"
            return response, step
        return response, ending(ctx, step, names, asked_heartbeat, v2)
    reason = next((r for go, r in decisions if go and r), None)
    if v2 and reason:
        heartbeat_row = ctx.heartbeat_row(reason)
        heartbeat_row.step_id = request.step_id
        step.rows.append(heartbeat_row)
    return response, step
