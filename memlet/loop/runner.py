"""Run the agent loop for one request: steps until a stop reason, yielding `LoopEvent`s.

Transactions: each step loads its state in one short transaction, calls the LLM with no transaction open, then
commits the step (messages, message_ids, block edits, system prompt, step and run rows) in one short transaction
under `pg_advisory_xact_lock`. The whole request holds the agent's session-level advisory lock on a dedicated
connection, so two requests to one agent never interleave (a second waits up to `agent_lock_timeout_s`, then gets
AgentBusyError). The user's input is written with the first successful step, so a failed first LLM call leaves
no trace but the failed run.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from memlet import ids
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.locks import release_agent_session_lock, try_agent_session_lock
from memlet.errors import AgentBusyError, BadRequestError, LLMError, NotFoundError, PendingApprovalError
from memlet.llm.client import LLMClient, LLMEmptyResponseError, client_for
from memlet.loop import events as ev
from memlet.loop.commit import commit_compaction, commit_step
from memlet.loop.llm_call import call_llm, request_tools
from memlet.loop.state import LoopRepository, LoopState
from memlet.loop.step import (
    NO_PENDING_APPROVAL,
    StepContext,
    StepResult,
    handle_response,
    pending_approval,
    resume_approval,
)
from memlet.loop.summarizer import ContextOverflowError, plan_compaction
from memlet.loop.tool_rules import ToolRulesSolver
from memlet.messages.requests import ApprovalCreate, MessageCreate, ToolReturnCreate
from memlet.messages.schemas import StopReasonType, run_status_for
from memlet.runs.repository import RunRepository
from memlet.tool_exec.memory_tools import ToolContext
from memlet.tools.rules import parse_tool_rules

log = logging.getLogger(__name__)
InputItem = MessageCreate | ApprovalCreate | ToolReturnCreate
_LOCK_POLL_S = 0.05


@dataclass
class LoopDeps:
    """What the loop needs from the app: a sessionmaker, settings, and an LLM client per llm_config."""

    sessionmaker: async_sessionmaker[AsyncSession]
    settings: Settings
    llm_for: Callable[[dict[str, Any]], LLMClient]


@dataclass
class RunOptions:
    max_steps: int = 50
    stream_tokens: bool = False
    override_model: str | None = None  # accepted, not applied yet
    client_tools: list[dict[str, Any]] = field(default_factory=list)
    run_metadata: dict[str, Any] | None = None
    request_config: dict[str, Any] | None = None
    background: bool = False


def default_llm_for(settings: Settings) -> Callable[[dict[str, Any]], LLMClient]:
    """The production factory: endpoint URL from llm_config, key from settings (none for local servers)."""

    def build(llm_config: dict[str, Any]) -> LLMClient:
        endpoint_type = str(llm_config.get("model_endpoint_type") or "openai")
        keys = {"openai": settings.openai_api_key, "deepseek": settings.deepseek_api_key}
        secret = keys.get(endpoint_type)
        base_url = llm_config.get("model_endpoint") or (
            settings.openai_base_url if endpoint_type == "openai" else "https://api.deepseek.com/v1"
        )
        return client_for(
            endpoint_type,
            str(base_url),
            secret.get_secret_value() if secret else None,
            settings.llm_timeout_s,
            settings.llm_max_retries,
        )

    return build


def input_row(item: MessageCreate, agent: orm.Agent, run_id: str) -> orm.Message:
    """A user/system/assistant input stored verbatim as text (or its content parts)."""
    if isinstance(item.content, str):
        content = [{"type": "text", "text": item.content}]
    else:
        content = [part.model_dump(mode="json") for part in item.content]
    return orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role=item.role,
        content=content,
        name=item.name,
        otid=item.otid,
        sender_id=item.sender_id,
        batch_item_id=item.batch_item_id,
        group_id=item.group_id,
        run_id=run_id,
    )


def _engine(maker: async_sessionmaker[AsyncSession]) -> AsyncEngine:
    bind = maker.kw.get("bind")
    if not isinstance(bind, AsyncEngine):
        raise TypeError("the loop's sessionmaker must be bound to an AsyncEngine")
    return bind


def _request_lock_name(agent_id: str) -> str:
    # A key of its own: the short commit transactions (and REST writers) take agent_xact_lock(agent_id), which
    # must not wait for a whole request, and must not deadlock against the request that holds this lock.
    return f"{agent_id}:request"


async def _acquire(engine: AsyncEngine, agent_id: str, timeout_s: float) -> AsyncConnection:
    """A connection holding the request lock. Waiters give their connection back between tries, so a queue of
    requests for one agent cannot starve the pool that the lock holder needs for its own steps."""
    deadline = time.monotonic() + timeout_s
    while True:
        conn = await engine.connect()
        try:
            acquired = await try_agent_session_lock(conn, _request_lock_name(agent_id))
            await conn.commit()  # no transaction stays open while we hold the session lock
        except BaseException:
            await conn.close()
            raise
        if acquired:
            return conn
        await conn.close()
        if time.monotonic() >= deadline:
            raise AgentBusyError(agent_id)
        await asyncio.sleep(_LOCK_POLL_S)


def _stop_usage(usage: dict[str, Any]) -> dict[str, Any]:
    return {"message_type": "usage_statistics", **usage}


@dataclass
class _Run:
    """Mutable per-request bookkeeping."""

    deps: LoopDeps
    run_id: str
    agent_id: str
    org_id: str
    options: RunOptions
    solver: ToolRulesSolver
    llm: LLMClient | None = None
    pending: list[orm.Message] = field(default_factory=list)  # input rows, written with the first step
    approval_items: list[Any] = field(default_factory=list)
    steps: int = 0
    tools_used: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(
        default_factory=lambda: {
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
    )
    started: float = field(default_factory=time.monotonic)

    async def load(self) -> LoopState:
        async with self.deps.sessionmaker() as session:
            state = await LoopRepository(session).load_state(self.agent_id, self.org_id)
        if state is None:
            raise NotFoundError("Agent", self.agent_id)
        return state

    def step_context(self, state: LoopState, step_id: str) -> StepContext:
        tool_ctx = ToolContext(agent=state.agent, blocks=state.blocks, sessionmaker=self.deps.sessionmaker)
        return StepContext(
            agent=state.agent,
            tools={t.name: t for t in state.tools},
            solver=self.solver,
            tool_ctx=tool_ctx,
            settings=self.deps.settings,
            run_id=self.run_id,
            step_id=step_id,
            client_tools={str(t.get("name")) for t in self.options.client_tools},
        )

    async def finish(self, stop_reason: str, error: Exception | None = None) -> ev.LoopEvent:
        status = run_status_for(StopReasonType(stop_reason))
        async with self.deps.sessionmaker() as session, session.begin():
            await RunRepository(session).finish(
                self.run_id,
                status=status,
                stop_reason=stop_reason,
                num_steps=self.steps,
                tools_used=self.tools_used,
                duration_ns=int((time.monotonic() - self.started) * 1e9),
                error={"type": type(error).__name__, "message": str(error)} if error else None,
            )
            agent = await session.get(orm.Agent, self.agent_id)
            if agent is not None:
                agent.last_stop_reason = stop_reason
        usage = _stop_usage(self.usage)
        if error is None:
            return ev.RunFinished(stop_reason=stop_reason, usage=usage)
        error_type = error.error_type if isinstance(error, LLMError) else "internal_error"
        return ev.RunFailed(stop_reason=stop_reason, error=error, error_type=error_type, usage=usage)


async def run_agent(
    deps: LoopDeps,
    *,
    agent_id: str,
    actor_org_id: str,
    run_id: str,
    inputs: list[InputItem],
    options: RunOptions,
) -> AsyncIterator[ev.LoopEvent]:
    """Process one request against an agent, yielding events; the last one is RunFinished or RunFailed.

    Raises before the first event: NotFoundError (unknown agent), AgentBusyError (lock wait timed out),
    PendingApprovalError (a normal message while an approval is pending), BadRequestError (an approval that
    matches no pending request).
    """
    conn = await _acquire(_engine(deps.sessionmaker), agent_id, deps.settings.agent_lock_timeout_s)
    try:
        async for event in _run_locked(deps, agent_id, actor_org_id, run_id, inputs, options):
            yield event
    finally:
        with contextlib.suppress(Exception):
            await release_agent_session_lock(conn, _request_lock_name(agent_id))
            await conn.commit()
        await conn.close()


def _approval_items(inputs: list[InputItem]) -> list[Any] | None:
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


def _check_approval(state: LoopState, items: list[Any] | None) -> orm.Message | None:
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


async def _run_locked(
    deps: LoopDeps, agent_id: str, org_id: str, run_id: str, inputs: list[InputItem], options: RunOptions
) -> AsyncIterator[ev.LoopEvent]:
    async with deps.sessionmaker() as session:
        state = await LoopRepository(session).load_state(agent_id, org_id)
    if state is None:
        raise NotFoundError("Agent", agent_id)
    approval = _check_approval(state, _approval_items(inputs))
    solver = ToolRulesSolver(parse_tool_rules(list(state.agent.tool_rules or [])))
    run = _Run(deps, run_id, agent_id, org_id, options, solver)
    run.pending = [input_row(i, state.agent, run_id) for i in inputs if isinstance(i, MessageCreate)]
    run.approval_items = _approval_items(inputs) or []
    async with deps.sessionmaker() as session, session.begin():
        runs = RunRepository(session)
        await runs.ensure_run(
            run_id=run_id,
            agent_id=agent_id,
            organization_id=org_id,
            metadata=options.run_metadata or {"run_type": "send_message"},
            request_config=options.request_config,
            background=options.background,
        )
        await runs.mark_running(run_id)
    run.llm = deps.llm_for(state.agent.llm_config)
    try:
        async for event in _steps(run, state, approval):
            yield event
    finally:
        closer = getattr(run.llm, "aclose", None)
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()


async def _steps(run: _Run, state: LoopState, approval: orm.Message | None) -> AsyncIterator[ev.LoopEvent]:
    if approval is not None:
        ctx = run.step_context(state, approval.step_id or ids.new_id(ids.Prefix.STEP))
        result = await resume_approval(ctx, approval, run.approval_items, [t.name for t in state.tools])
        run.tools_used += result.tools_called
        committed = await commit_step(
            run.deps.sessionmaker,
            ctx=ctx,
            result=result,
            step=None,
            pending=[],
            num_steps=run.steps,
            tools_used=run.tools_used,
        )
        yield ev.MessagesCommitted(committed)
        if not result.should_continue:
            yield await run.finish(result.stop_reason or "end_turn")
            return
        state = await run.load()
    stop_reason = "end_turn"
    for index in range(run.options.max_steps):
        if await _cancelled(run):
            yield await run.finish("cancelled")
            return
        outcome: list[Any] = []
        try:
            async for event in _llm_step(run, state, outcome):
                yield event
        except ContextOverflowError as exc:
            yield await run.finish("context_window_overflow_in_system_prompt", exc)
            return
        except LLMEmptyResponseError as exc:
            yield await run.finish("invalid_llm_response", exc)
            return
        except LLMError as exc:
            yield await run.finish("llm_api_error", exc)
            return
        except Exception as exc:
            log.exception("agent loop step failed")
            yield await run.finish("error", exc)
            return
        result: StepResult = outcome[0]
        if result.stop_reason == "no_tool_call":
            error = LLMError("No tool calls found in response, model must make a tool call", error_type="llm_error")
            yield await run.finish("no_tool_call", error)
            return
        if not result.should_continue:
            stop_reason = result.stop_reason or "end_turn"
            break
        if index == run.options.max_steps - 1:
            stop_reason = "max_steps"
            break
        state = await run.load()
    yield await run.finish(stop_reason)


async def _cancelled(run: _Run) -> bool:
    async with run.deps.sessionmaker() as session:
        return await RunRepository(session).status_of(run.run_id) == "cancelled"


async def _llm_step(run: _Run, state: LoopState, outcome: list[Any]) -> AsyncIterator[ev.LoopEvent]:
    """Compact if needed, call the LLM, run the tools, commit; `outcome` receives the StepResult."""
    assert run.llm is not None
    agent = state.agent
    tools, allowed, tool_choice = request_tools(state, run.solver, run.options.client_tools)
    window = int(agent.llm_config.get("context_window") or 128000)
    system_text = "".join(p.get("text", "") for p in (state.messages[0].content or []) if p.get("type") == "text")
    plan = await plan_compaction(
        llm=run.llm,
        model=str(agent.llm_config.get("model")),
        system=system_text,
        rows=state.messages[1:],
        pending=run.pending,
        tools=tools,
        agent_type=agent.agent_type,
        window=window,
    )
    if plan is not None:
        await commit_compaction(run.deps.sessionmaker, state=state, plan=plan, window=window)
        state = await run.load()
        system_text = "".join(p.get("text", "") for p in (state.messages[0].content or []) if p.get("type") == "text")
    step_id = ids.new_id(ids.Prefix.STEP)
    ctx = run.step_context(state, step_id)
    step = orm.Step(
        id=step_id,
        organization_id=run.org_id,
        agent_id=run.agent_id,
        run_id=run.run_id,
        provider_name=agent.llm_config.get("model_endpoint_type"),
        provider_category="base",
        model=agent.llm_config.get("model"),
        model_endpoint=agent.llm_config.get("model_endpoint"),
        context_window_limit=window,
        status="pending",
        tags=[],
    )
    assistant_id = ids.new_id(ids.Prefix.MESSAGE)
    result_box: list[Any] = []
    try:
        async for delta in call_llm(
            run.llm,
            state,
            system_text,
            run.pending,
            tools,
            tool_choice,
            run.options.stream_tokens,
            assistant_id,
            result_box,
        ):
            yield delta
    except Exception as exc:
        await _fail_step(run, step, exc)
        raise
    chat = result_box[0]
    _add_usage(run, step, chat.usage)
    result = await handle_response(ctx, chat, allowed, assistant_id)
    outcome.append(result)
    if result.stop_reason == "no_tool_call":
        await _fail_step(run, step, None, stop_reason="no_tool_call")
        return
    last = not result.should_continue
    step.stop_reason = result.stop_reason if last else None
    step.status = "success"
    run.tools_used += result.tools_called
    committed = await commit_step(
        run.deps.sessionmaker,
        ctx=ctx,
        result=result,
        step=step,
        pending=run.pending,
        num_steps=run.steps,
        tools_used=run.tools_used,
    )
    run.pending = []
    if committed:
        yield ev.MessagesCommitted(committed)


def _add_usage(run: _Run, step: orm.Step, usage: Any) -> None:
    step.prompt_tokens, step.completion_tokens = usage.prompt_tokens, usage.completion_tokens
    step.total_tokens = usage.total_tokens
    step.cached_input_tokens, step.reasoning_tokens = usage.cached_tokens, usage.reasoning_tokens
    run.usage["prompt_tokens"] += usage.prompt_tokens
    run.usage["completion_tokens"] += usage.completion_tokens
    run.usage["total_tokens"] += usage.total_tokens
    run.usage["cached_input_tokens"] = (run.usage["cached_input_tokens"] or 0) + usage.cached_tokens
    run.usage["reasoning_tokens"] = (run.usage["reasoning_tokens"] or 0) + usage.reasoning_tokens
    run.usage["context_tokens"] = usage.total_tokens
    run.usage["step_count"] += 1
    run.steps += 1


async def _fail_step(run: _Run, step: orm.Step, exc: Exception | None, stop_reason: str | None = None) -> None:
    step.status = "failed"
    step.stop_reason = stop_reason or ("llm_api_error" if isinstance(exc, LLMError) else "error")
    step.error_type = type(exc).__name__ if exc else stop_reason
    step.error_data = {"message": str(exc)} if exc else None
    async with run.deps.sessionmaker() as session, session.begin():
        await RunRepository(session).merge_step(step)
