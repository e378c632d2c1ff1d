"""Per-request bookkeeping of the loop: loading state, usage totals, step failures and closing the run."""

import time
from dataclasses import dataclass, field
from typing import Any

from memlet import metrics
from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import lone_statements
from memlet.db.message_row import MessageRow
from memlet.errors import LLMError, NotFoundError
from memlet.llm.chat_format import is_v2
from memlet.llm.client import LLMClient
from memlet.loop import events as ev
from memlet.loop.agent_state import LoopRepository, LoopState
from memlet.loop.buffer_chat import BufferChat
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.cancel_signal import CancelWatch, RunCancelled
from memlet.loop.commit import Closing
from memlet.loop.deps import LoopDeps, RunOptions
from memlet.loop.response import StepContext, StepResult
from memlet.loop.step_writes import Remembered
from memlet.messages.error_events import run_error
from memlet.messages.schemas import StopReasonType, run_status_for
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunEnd
from memlet.runs.step_repository import StepRepository
from memlet.runs.trace_write import TraceWrite, insert_trace
from memlet.tools.solver import ToolRulesSolver

# How old a status read by the last commit may be for the next step to go on without reading it again.
STATUS_CURRENT_S = 0.1


def _empty_usage() -> dict[str, Any]:
    return {
        "completion_tokens": 0,
        "prompt_tokens": 0,
        "total_tokens": 0,
        "step_count": 0,
        "run_ids": None,
        "cached_input_tokens": None,
        "cache_write_tokens": None,
        "reasoning_tokens": None,
        "context_tokens": None,
    }


def turn_stop_reason(result: StepResult, *, last: bool) -> str | None:
    """Why the turn ends after a step that committed: the step's own stop reason, or max_steps after the last
    step allowed; None when the turn goes on."""
    if not result.should_continue:
        return result.stop_reason or "end_turn"
    return "max_steps" if last else None


@dataclass
class RunState:
    """Mutable state of one request: the solver, the not-yet-written input, usage and step counts."""

    deps: LoopDeps
    run_id: str
    agent_id: str
    org_id: str
    options: RunOptions
    solver: ToolRulesSolver
    llm: LLMClient | None = None
    watch: CancelWatch | None = None  # fires when a client cancels the run (raced by the LLM call and tools)
    pending: list[orm.Message] = field(default_factory=list)  # input rows, written with the first step
    approval_items: list[Any] = field(default_factory=list)
    approval_group_id: str | None = None  # the group the answers belong to (a sleeptime manager's)
    steps: int = 0  # LLM calls made
    # The steps the run wrote a row for, failed ones included: Letta's `num_steps` counts every step of the run.
    step_ids: set[str] = field(default_factory=set)
    # 1 once the client's approval answers were applied: as in Letta, that is the loop's first step of max_steps.
    answer_steps: int = 0
    tools_used: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=_empty_usage)
    started: float = field(default_factory=time.monotonic)
    # The run's status as last read in a write transaction (a client may cancel it between steps), and when.
    run_status: str | None = None
    status_read_at: float = 0.0
    # Set when a step changed what a plain append cannot describe (memory edits, compaction).
    needs_reload: bool = False
    # The final event once the commit of the turn's last step closed the run (`closing`, `closed_by`).
    closed: ev.RunFinished | None = None
    # The turn's buffer converted to chat messages, shared by its steps' compaction checks and requests.
    chat: BufferChat = field(default_factory=BufferChat)
    # The system prompt the turn's requests send: the stored one as the turn started, until a compaction or a file
    # opened or closed rebuilds it (None: take the stored one at the next request). A memory edit rewrites the
    # stored prompt (and `state.messages[0]`) for the next turn; the rest of this turn keeps its prefix, and so the
    # provider's prompt cache, as Letta's loop does (the model reads the edit in the tool's return).
    turn_system: str | None = None
    # The last logprobs an LLM call of this turn returned (letta_v1 loop only, as Letta's V3 agent keeps them).
    logprobs: dict[str, Any] | None = None

    async def next_state(self, state: LoopState) -> LoopState:
        """The state for the next step: the one in memory (kept current by each commit) unless a reload is due."""
        if not self.needs_reload:
            return state
        self.needs_reload = False
        return await self.load()

    async def load(self) -> LoopState:
        """A fresh snapshot of the agent for the next step (raises NotFoundError if it was deleted)."""
        async with self.deps.sessionmaker() as session:
            repo = LoopRepository(session, self.deps.window_cache)
            state = await repo.load_state(self.agent_id, self.org_id, self.options.conversation_id)
        if state is None:
            raise NotFoundError("Agent", self.agent_id)
        return self.apply_override(state)

    def remember(self, state: LoopState, remembered: Remembered, rows: list[orm.Message]) -> None:
        """Carry `state` past the commit of a memory edit (in the agent's thread or a conversation), in place, from
        what that commit read back (the agent row, its blocks, the system prompt it wrote, the conversation row)
        instead of reloading it; the step's rows join the buffer as after any step."""
        state.agent = remembered.agent
        self.apply_override(state)
        state.blocks = remembered.blocks
        if remembered.conversation is not None:
            state.conversation = remembered.conversation
        state.messages[0] = state.messages[0]._replace(content=[{"type": "text", "text": remembered.system_text}])
        state.messages.extend(MessageRow.of(row) for row in rows)

    def apply_override(self, state: LoopState) -> LoopState:
        """Swap in the request's llm_config override. The agent row is detached, so this never reaches the DB."""
        override = self.options.llm_config_override
        if override:
            state.agent.llm_config = {**(state.agent.llm_config or {}), **override}
        return state

    def step_context(self, state: LoopState, step_id: str) -> StepContext:
        tool_ctx = ToolContext(
            agent=state.agent,
            blocks=state.blocks,
            sessionmaker=self.deps.sessionmaker,
            embedder=self.deps.embedder,
            messenger=self.deps.agent_messenger,
            agent_chain=self.options.agent_chain,
        )
        return StepContext(
            agent=state.agent,
            tools={t.name: t for t in state.tools},
            solver=self.solver,
            tool_ctx=tool_ctx,
            settings=self.deps.settings,
            run_id=self.run_id,
            step_id=step_id,
            client_tools={str(t.get("name")) for t in self.options.client_tools},
            conversation_id=self.options.conversation_id,
            final_step=self.options.blocking
            and is_v2(state.agent.agent_type)
            and self.steps + self.answer_steps >= self.options.max_steps - 1,
            system_message=state.messages[0] if state.messages else None,
            config_overridden=bool(self.options.llm_config_override),
            pooled_sessionmaker=self.deps.pooled_sessionmaker,
        )

    def add_usage(self, step: orm.Step, usage: Any, *, v2: bool = False) -> None:
        """Count one LLM call into the step row and the run totals. In Letta's V3 loop the call's total is the
        usage's context size; its V2 loop (`v2`) never reports one, so its usage keeps `context_tokens` null."""
        step.prompt_tokens, step.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        step.total_tokens = usage.total_tokens
        # As in Letta, a step shows cached and reasoning tokens only when there were some (null otherwise).
        step.cached_input_tokens, step.reasoning_tokens = usage.cached_tokens or None, usage.reasoning_tokens or None
        step.cache_write_tokens = usage.cache_write_tokens or None
        self.usage["prompt_tokens"] += usage.prompt_tokens
        self.usage["completion_tokens"] += usage.completion_tokens
        self.usage["total_tokens"] += usage.total_tokens
        # Letta's V3 loop reads a token stream's details as the provider reported them (null when it did not) and its
        # V2 loop's token streams never read them; its calls that are no token stream count an unreported detail as
        # 0, so once such a step ran their totals show 0 (cache writes too).
        streamed = self.options.stream_tokens
        for total, detail in (
            ("cached_input_tokens", usage.cached_tokens),
            ("cache_write_tokens", usage.cache_write_tokens),
            ("reasoning_tokens", usage.reasoning_tokens),
        ):
            if not streamed:
                self.usage[total] = (self.usage[total] or 0) + (detail or 0)
            elif detail is not None and not v2:
                self.usage[total] = (self.usage[total] or 0) + detail
        if not v2:
            self.usage["context_tokens"] = usage.total_tokens
        self.usage["step_count"] += 1
        self.steps += 1
        self.step_ids.add(step.id)

    @property
    def num_steps(self) -> int:
        """The run's `num_steps`: its step rows (as `/v1/runs/{id}/steps` lists them), a failed LLM call's included."""
        return len(self.step_ids)

    async def fail_step(
        self,
        step: orm.Step,
        exc: Exception | None,
        stop_reason: str | None = None,
        trace: TraceWrite | None = None,
    ) -> None:
        """Write the step row as failed (its messages are never written), with the usage of its LLM call if it
        answered (a cancel during its tools), so the run's usage still counts those tokens; and its provider
        trace, if any."""
        step.status = "failed"
        self.step_ids.add(step.id)
        if stop_reason is None and isinstance(exc, RunCancelled):
            stop_reason = "cancelled"
        step.stop_reason = stop_reason or ("llm_api_error" if isinstance(exc, LLMError) else "error")
        step.error_type = type(exc).__name__ if exc else stop_reason
        step.error_data = {"message": str(exc)} if exc else None
        async with self.deps.sessionmaker() as session, session.begin():
            await StepRepository(session).merge_step(step)
            if trace is not None:
                await session.flush()  # the step row, before the trace that refers to it
                await insert_trace(session, trace, utcnow())

    async def cancelled(self, *, fresh: bool) -> bool:
        """Whether a client cancelled the run. The first step uses the status read when the run started; later
        steps read it again, since a client may cancel while the previous step's messages are being delivered."""
        if fresh and not self._status_is_current():
            async with lone_statements(self.deps.sessionmaker) as driver:  # no BEGIN and ROLLBACK
                self.status_read(await RunRepository.status_via(driver, self.run_id))
        return self.run_status == "cancelled" or (self.watch is not None and self.watch.fired)

    def status_read(self, status: str | None) -> None:
        """Record the run's status as a statement just read it (a step's commit reads it back)."""
        self.run_status = status
        self.status_read_at = time.monotonic()

    def _status_is_current(self) -> bool:
        """A status read moments ago (by the step's own commit) is as fresh as a new read: a cancel from this
        process fires the watch at once, and one from another process is seen by its poll within `POLL_S`."""
        return self.watch is not None and time.monotonic() - self.status_read_at < STATUS_CURRENT_S

    def closing(self, stop_reason: str) -> Closing:
        """The run's end for the commit of the step that ends the turn normally (`commit_step` writes it)."""
        usage = {"message_type": "usage_statistics", **self.usage}
        event = ev.RunFinished(stop_reason=stop_reason, usage=usage, logprobs=self.logprobs)
        return Closing(self._end(stop_reason, None), event, self.options.on_finish)

    def closed_by(self, closing: Closing) -> None:
        """Record that a step's commit closed the run with `closing`: the turn's final event is its event."""
        self.closed = closing.event
        metrics.run_finished(closing.end.status, closing.end.stop_reason)

    async def finish(self, stop_reason: str, error: Exception | None = None) -> ev.LoopEvent:
        """Close the run row in a transaction of its own (a turn that fails, is cancelled, or ends after its last
        commit), record the agent's last stop reason, and build the final event."""
        usage = {"message_type": "usage_statistics", **self.usage}
        event = self._final_event(stop_reason, usage, error, self.logprobs)
        end = self._end(stop_reason, event)
        async with self.deps.sessionmaker() as session, session.begin():
            await RunRepository(session).finish(
                self.run_id,
                status=end.status,
                stop_reason=stop_reason,
                num_steps=self.num_steps,
                tools_used=self.tools_used,
                duration_ns=end.duration_ns,
                error=end.error,
            )
            await LoopRepository(session).agents.set_last_stop_reason(self.agent_id, stop_reason)
            if isinstance(event, ev.RunFinished) and self.options.on_finish is not None:
                await self.options.on_finish(session, event, [])
        metrics.run_finished(end.status, stop_reason)
        return event

    def _end(self, stop_reason: str, event: ev.LoopEvent | None) -> RunEnd:
        error = None
        if isinstance(event, ev.RunFailed):  # the run's metadata.error (`run_error`)
            error = run_error(self.run_id, event.error, event.error_type, streamed=not self.options.blocking)
        return RunEnd(
            status=run_status_for(StopReasonType(stop_reason)),
            stop_reason=stop_reason,
            duration_ns=int((time.monotonic() - self.started) * 1e9),
            error=error,
        )

    @staticmethod
    def _final_event(
        stop_reason: str, usage: dict[str, Any], error: Exception | None, logprobs: dict[str, Any] | None
    ) -> ev.LoopEvent:
        if error is None:
            return ev.RunFinished(stop_reason=stop_reason, usage=usage, logprobs=logprobs)
        error_type = error.error_type if isinstance(error, LLMError) else "internal_error"
        if stop_reason == "context_window_overflow_in_system_prompt":
            error_type = stop_reason  # Letta's in-stream error type for it
        return ev.RunFailed(stop_reason=stop_reason, error=error, error_type=error_type, usage=usage)
