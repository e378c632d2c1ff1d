"""Cancel runs from the API: mark them cancelled, and unblock an agent left waiting for an approval.

A running loop notices the cancellation within about half a second, even in the middle of an LLM call or a tool
(`cancel_signal`), and stops with stop_reason `cancelled`. A run that stopped with `requires_approval` has already
ended, but cancelling it (as in Letta) denies every pending call: an approval response plus one tool message with
an error return per call (including ungated calls held back with a mixed response), so the agent can take a normal
message again.
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm
from memlet.db.locks import agent_xact_lock
from memlet.loop.agent_state import LoopRepository
from memlet.loop.approvals import held_calls, pending_approval
from memlet.loop.cancel_signal import signal
from memlet.loop.response import DENIAL_PREFIX, merged_tool_rows, tool_return_row
from memlet.loop.tool_dispatch import failure

CANCEL_DENIAL_REASON = "The user cancelled the request, so the tool call was denied."


async def cancel_runs(session: AsyncSession, agent_id: str, run_ids: Sequence[str]) -> dict[str, str]:
    """Cancel `run_ids` of agent `agent_id`; returns `{run_id: "cancelled" | "failed"}` as Letta's route does.

    "failed" means no such run for this agent. A run that already ended (other than waiting for an approval) is
    left as it is and still reported "cancelled". If any run was cancelled and the agent's buffer ends with a
    pending approval request, the pending calls are denied with CANCEL_DENIAL_REASON. The caller resolves "all
    active runs" itself and checks the agent belongs to the actor; runs in the caller's transaction, never commits;
    holds the agent's xact lock until that transaction ends.
    """
    results: dict[str, str] = {}
    cancelled: str | None = None
    # The agent's lock before any run row, in the order a step's commit takes them, or the two deadlock.
    await agent_xact_lock(session, agent_id)
    for run_id in run_ids:
        run = await session.get(orm.Run, run_id, with_for_update=True)
        if run is None or run.agent_id != agent_id:
            results[run_id] = "failed"
            continue
        results[run_id] = "cancelled"
        if run.stop_reason is not None and run.stop_reason != "requires_approval":
            continue  # already over: cancelling is a no-op, as in Letta
        now = datetime.now(UTC)
        if run.stop_reason == "requires_approval":
            # Letta's metrics count it until now; the run itself keeps the duration it stopped with.
            run.cancelled_run_ns = (now - run.created_at) // timedelta(microseconds=1) * 1000
        run.status, run.stop_reason = "cancelled", "cancelled"
        run.completed_at = run.completed_at or now
        signal(run_id)  # a loop running here stops its LLM call or tool at once (others poll the row)
        cancelled = run_id
    if cancelled is not None:
        await deny_pending(session, agent_id, cancelled)
    return results


async def deny_pending(
    session: AsyncSession,
    agent_id: str,
    run_id: str,
    *,
    reason: str = CANCEL_DENIAL_REASON,
    stop_reason: str = "cancelled",
    only_own: bool = False,
) -> None:
    """Record `stop_reason` on the agent and deny its pending approval request (with `only_own`: only when
    `run_id` made that request), in the thread the run belongs to: the agent's own window or its conversation's.
    Takes the agent's xact lock; never commits."""
    await agent_xact_lock(session, agent_id)
    repo = LoopRepository(session)
    agent = await repo.agents.reload(agent_id)
    if agent is None:
        return
    agent.last_stop_reason = stop_reason
    run = await session.get(orm.Run, run_id)
    conversation_id = run.conversation_id if run is not None else None
    conversation = await repo.conversations.find(agent.organization_id, conversation_id) if conversation_id else None
    window = conversation.message_ids if conversation is not None else agent.message_ids
    rows = await repo.messages.by_ids(agent.id, window or [])
    request = pending_approval(rows)
    if request is None or (only_own and request.run_id != run_id):
        return
    asked: list[dict[str, Any]] = list(request.tool_calls or [])
    first = asked[0]["id"]
    response = orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role="approval",
        run_id=run_id,
        step_id=request.step_id,
        approvals=[{"type": "approval", "tool_call_id": c["id"], "approve": False, "reason": reason} for c in asked],
        approve=False,
        approval_request_id=first,
        denial_reason=reason,
    )
    denied = failure(f"{DENIAL_PREFIX}{reason}")
    # As Letta stores them: the approval response, then one tool message with a denied return per pending call.
    returns = merged_tool_rows(
        [
            tool_return_row(agent, c["id"], c["function"]["name"], denied, run_id=run_id, step_id=request.step_id)
            for c in [*asked, *held_calls(rows)]
        ]
    )
    new_rows = [response, returns]
    if conversation is not None:
        for row in new_rows:
            row.conversation_id = conversation.id
        await repo.messages.add(new_rows)
        await repo.conversations.append_message_ids(conversation.id, [r.id for r in new_rows])
        return
    await repo.messages.add(new_rows)
    agent.message_ids = [*(agent.message_ids or []), *(r.id for r in new_rows)]
    await session.flush()
