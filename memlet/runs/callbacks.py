"""Completion callbacks of async runs: POST the finished run to the ``callback_url`` its request gave.

Letta 0.16.8 behaviour: once an async run reaches a terminal status, it POSTs a JSON body
``{"run_id", "status", "completed_at", "metadata"}`` (the run's metadata plus ``"result"``, the run's
``LettaResponse``) with a 5 second timeout and no extra headers, then records ``callback_sent_at``,
``callback_status_code`` (any status, 2xx or not) or ``callback_error`` on the run. A failed callback never
changes the run's own outcome, and nothing here raises into the caller.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.log import get_logger
from memlet.messages.schemas import LettaResponse, LettaStopReason, LettaUsageStatistics, StopReasonType
from memlet.net.fetch import Fetcher
from memlet.net.outbound import OutboundPolicy
from memlet.runs.repository import RunRepository
from memlet.runs.service import RunService
from memlet.runs.step_repository import StepRepository

log = get_logger("runs.callbacks")

CALLBACK_TIMEOUT_S = 5.0
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
# Letta builds the result from the first page of the run's messages (its default page size).
RESULT_MESSAGE_LIMIT = 100
_STOP_REASONS = frozenset(r.value for r in StopReasonType)


@dataclass(frozen=True)
class CallbackOutcome:
    """What happened to one callback POST: when it was sent, and the status code or the error."""

    sent_at: datetime
    status_code: int | None = None
    error: str | None = None


def naive_iso(moment: datetime | None) -> str:
    # Letta stores and sends completion times as naive UTC ("2025-01-01T12:00:00.123456", no offset).
    moment = moment or datetime.now(UTC)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat()


def callback_payload(run: orm.Run, result: LettaResponse | None) -> dict[str, Any]:
    """The JSON body Letta posts for a finished run: id, status, completion time, metadata (+ ``result``)."""
    metadata: dict[str, Any] = dict(run.metadata_ or {})
    if result is not None:
        metadata["result"] = result.model_dump(mode="json", by_alias=True)
    return {
        "run_id": run.id,
        "status": run.status,
        "completed_at": naive_iso(run.completed_at),
        "metadata": metadata,
    }


async def post_callback(
    url: str,
    payload: dict[str, Any],
    *,
    run_id: str,
    policy: OutboundPolicy,
    timeout_s: float = CALLBACK_TIMEOUT_S,
    subject: str = "run",
) -> CallbackOutcome:
    """POST ``payload`` to ``url``; any failure becomes ``error``, never an exception.

    The connection obeys the outbound URL ``policy`` and redirects are not followed. The recorded error is the
    same sentence whatever went wrong (refused by the policy, refused by the host, timeout, bad URL), so a run's
    ``callback_error`` cannot be used to probe what listens where; the cause goes to the server log only.
    """
    sent_at = datetime.now(UTC)
    try:
        async with Fetcher(policy, timeout_s) as fetcher:
            response = await fetcher.request("POST", url, json_body=payload, max_bytes=0)  # only the status counts
        return CallbackOutcome(sent_at=sent_at, status_code=response.status)
    except Exception as exc:
        log.warning("callback of %s %s could not be delivered: %r", subject, run_id, exc)
        return CallbackOutcome(sent_at=sent_at, error=callback_error(run_id, url, subject))


def callback_error(run_id: str, url: str, subject: str = "run") -> str:
    """The one error a run (or a batch job: `subject` "job") records when its callback could not be delivered."""
    return f"Failed to dispatch callback for {subject} {run_id} to {url}: the callback could not be delivered"


async def _run_result(session: AsyncSession, actor: Actor, run: orm.Run) -> LettaResponse:
    """The run's ``LettaResponse`` as Letta rebuilds it: its messages, stop reason and usage summed over steps."""
    messages = await RunService(session, actor).messages_of(run.id, Page(limit=RESULT_MESSAGE_LIMIT, order="asc"))
    totals = await StepRepository(session).token_totals(run.id)
    # A run that failed before the loop took it over has no stop reason; Letta records "error" for those.
    fallback = StopReasonType.end_turn if run.status == "completed" else StopReasonType.error
    reason = StopReasonType(run.stop_reason) if run.stop_reason in _STOP_REASONS else fallback
    usage = LettaUsageStatistics(
        completion_tokens=totals.completion_tokens,
        prompt_tokens=totals.prompt_tokens,
        total_tokens=totals.total_tokens,
        step_count=totals.step_count,
        # Letta leaves these null unless a provider reported them.
        cached_input_tokens=totals.cached_input_tokens or None,
        reasoning_tokens=totals.reasoning_tokens or None,
    )
    return LettaResponse(messages=messages, stop_reason=LettaStopReason(stop_reason=reason), usage=usage)


async def _prepare(
    sessionmaker: async_sessionmaker[AsyncSession], actor: Actor, run_id: str
) -> tuple[str, dict[str, Any]] | None:
    async with sessionmaker() as session:
        run = await RunRepository(session).find(actor.organization_id, run_id)
        # Only a finished async run with a callback, and only once (Letta fires on the first terminal update).
        if run is None or not run.callback_url or not run.background or run.callback_sent_at is not None:
            return None
        if run.status not in TERMINAL_STATUSES:
            return None
        result = await _run_result(session, actor, run)
        return run.callback_url, callback_payload(run, result)


async def _record(sessionmaker: async_sessionmaker[AsyncSession], run_id: str, outcome: CallbackOutcome) -> None:
    async with sessionmaker() as session, session.begin():
        run = await session.get(orm.Run, run_id)
        if run is None:
            return
        run.callback_sent_at = outcome.sent_at
        run.callback_status_code = outcome.status_code
        run.callback_error = outcome.error


async def dispatch_run_callback(
    sessionmaker: async_sessionmaker[AsyncSession],
    actor: Actor,
    run_id: str,
    *,
    policy: OutboundPolicy,
    timeout_s: float = CALLBACK_TIMEOUT_S,
) -> CallbackOutcome | None:
    """Send a finished async run's callback and record the outcome on the run; ``None`` when none was due.

    Never raises: the run is already closed and its outcome must not depend on the receiver.
    """
    try:
        prepared = await _prepare(sessionmaker, actor, run_id)
        if prepared is None:
            return None
        url, payload = prepared
        # The POST happens outside any session so a slow receiver holds no database connection.
        outcome = await post_callback(url, payload, run_id=run_id, policy=policy, timeout_s=timeout_s)
        await _record(sessionmaker, run_id, outcome)
        return outcome
    except Exception:
        log.exception("run callback bookkeeping failed for %s", run_id)
        return None
