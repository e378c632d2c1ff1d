"""One step of the loop after the LLM answered: turn the response into rows, run the tools, decide what is next.

Nothing here touches the database except through tools (conversation_search reads); the runner commits the rows
this module builds. Every tool call gets exactly one tool-return row: a result, an error, or a rule violation.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.llm.chat_format import HEARTBEAT_PARAM, THINKING_PARAM, is_v2
from memlet.llm.types import ChatResult, SummarizedReasoning, ThinkingBlock, ToolCall
from memlet.loop.builtin_tools import ToolContext
from memlet.loop.call_args import heartbeat_flag, parse_args, pop_heartbeat, stored_call
from memlet.loop.chat_request import parallel_calls_enabled
from memlet.loop.tool_batch import PlannedCall, prefill_error, run_planned
from memlet.loop.tool_dispatch import ToolOutcome
from memlet.messages.packing import pack_heartbeat, pack_tool_return
from memlet.tools.solver import ToolRulesSolver

HIDDEN = "[This is an automated system message hidden from the user] "
HEARTBEAT_CONTINUE_RULE = HIDDEN + "Continuing: continue tool rule."
HEARTBEAT_CHILD_RULE = HIDDEN + "Continuing: child tool rule."
HEARTBEAT_VIOLATION = HIDDEN + "Continuing: tool rule violation."
HEARTBEAT_REQUESTED = HIDDEN + "Function called using request_heartbeat=true, returning control"
HEARTBEAT_FAILED = HIDDEN + "Function call failed, returning control"
HEARTBEAT_DENIED = HIDDEN + "Continuing: user denied request to call tool."
DENIAL_PREFIX = "Error: request to call tool denied. User reason: "


def required_before_exit_reason(names: Sequence[str]) -> str:
    """V3's heartbeat when the model tries to end its turn before calling required tools."""
    return HIDDEN + f"ToolRuleViolated: You must call {', '.join(names)} at least once to exit the loop."


def required_before_exit_v2_reason(names: Sequence[str]) -> str:
    """V2's wording of the same heartbeat."""
    return HIDDEN + f"Continuing, user expects these tools: [{', '.join(names)}] to be called still."


@dataclass
class StepResult:
    """The rows a step produced (in order), whether the loop goes on, and why it stopped if not."""

    rows: list[orm.Message] = field(default_factory=list)
    should_continue: bool = False
    stop_reason: str | None = None
    tools_called: list[str] = field(default_factory=list)


@dataclass
class StepContext:
    """Per-request state the step handlers share."""

    agent: orm.Agent
    tools: dict[str, orm.Tool]
    solver: ToolRulesSolver
    tool_ctx: ToolContext
    settings: Settings
    run_id: str
    step_id: str
    client_tools: set[str] = field(default_factory=set)
    conversation_id: str | None = None  # the conversation the step's rows belong to (None: the agent's own)
    # The last step a blocking V2 send may take: as in Letta's V2 `step()`, it ends the turn with max_steps.
    final_step: bool = False
    # The thread's system message as the loop last read or wrote it (a memory edit's commit checks that nobody
    # rewrote it since), and whether the request overrides the agent's llm_config (its prompt is compiled from the
    # stored one).
    system_message: MessageRow | None = None
    config_overridden: bool = False
    # Sessions for calls run side by side (`tool_batch`): the turn's locked connection takes one statement at a
    # time (None: `tool_ctx.sessionmaker` is a pool's already).
    pooled_sessionmaker: async_sessionmaker[AsyncSession] | None = None

    @property
    def model(self) -> str | None:
        """The model an assistant row is stored with: the agent's configured one (for this request), as Letta
        stores it, not the name the provider answered under (a dated one for an alias), so the thinking it made
        is sent back while the config names that model."""
        return (self.agent.llm_config or {}).get("model")

    def row(self, role: str, **fields: Any) -> orm.Message:
        """A new message row of this step (ids, run and step filled in)."""
        message_id = fields.pop("id", None) or ids.new_id(ids.Prefix.MESSAGE)
        return orm.Message(
            id=message_id,
            organization_id=self.agent.organization_id,
            agent_id=self.agent.id,
            role=role,
            run_id=self.run_id,
            step_id=self.step_id,
            otid=fields.pop("otid", None),
            **fields,
        )

    def tool_row(self, call_id: str, name: str, outcome: ToolOutcome) -> orm.Message:
        """The tool-return row answering call `call_id`."""
        return tool_return_row(self.agent, call_id, name, outcome, run_id=self.run_id, step_id=self.step_id)

    def heartbeat_row(self, reason: str) -> orm.Message:
        return self.row(
            "user", content=[{"type": "text", "text": pack_heartbeat(reason, timezone=self.agent.timezone)}]
        )


def tool_return_row(
    agent: orm.Agent, call_id: str, name: str, outcome: ToolOutcome, *, run_id: str | None, step_id: str | None
) -> orm.Message:
    """A tool-return row: the packed result as its text (what the model reads) plus the structured return (a
    client's result in parts: that text unpacked, and the parts as the return, as Letta stores them)."""
    response: str | list[dict[str, Any]]
    if outcome.parts is not None:
        packed, response = str(outcome.value), outcome.parts
    else:
        packed = response = pack_tool_return(outcome.success, outcome.value, timezone=agent.timezone)
    stored_return = {
        "tool_call_id": call_id,
        "status": "success" if outcome.success else "error",
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
        "func_response": response,
    }
    return orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role="tool",
        run_id=run_id,
        step_id=step_id,
        name=name,
        tool_call_id=call_id,
        content=[{"type": "text", "text": packed}],
        tool_returns=[stored_return],
    )


def thinking_part(block: ThinkingBlock) -> dict[str, Any]:
    """A signed thinking block as a stored content part (its signature kept so the next request sends it back)."""
    if block.redacted is not None:
        return {"type": "redacted_reasoning", "data": block.redacted}
    return {"type": "reasoning", "reasoning": block.text, "is_native": True, "signature": block.signature}


def summarized_part(item: SummarizedReasoning) -> dict[str, Any]:
    """A Responses API reasoning item as a stored summarized_reasoning part (its encrypted content is sent back)."""
    summary = [{"index": i, "text": text} for i, text in enumerate(item.summary)]
    return {
        "type": "summarized_reasoning",
        "id": item.id,
        "summary": summary,
        "encrypted_content": item.encrypted_content,
    }


def assistant_content(result: ChatResult, thinking: str | None, v2: bool) -> list[dict[str, Any]] | None:
    """Stored content of the assistant row: native reasoning first, then text (V2: the inner thoughts)."""
    parts: list[dict[str, Any]] = [thinking_part(block) for block in result.thinking]
    parts += map(summarized_part, result.summarized)
    if result.reasoning and not parts:
        parts.append({"type": "reasoning", "reasoning": result.reasoning, "is_native": True, "signature": None})
    text = thinking if v2 else result.content
    if text:
        parts.append({"type": "text", "text": text})
    return parts or None


def needs_approval(ctx: StepContext, name: str) -> bool:
    """Whether a call to `name` waits for the client: a requires_approval rule (attaching a tool whose default
    requires approval adds one; the agent may drop it), or a client tool."""
    return name in ctx.client_tools or ctx.solver.requires_approval(name)


def previous_message_id(message_id: str) -> str:
    """The message id whose uuid is one less (Letta numbers the approval row of a mixed response this way)."""
    prefix = f"{ids.Prefix.MESSAGE}-"
    value = (int(message_id.removeprefix(prefix).replace("-", ""), 16) - 1) % (1 << 128)
    digits = f"{value:032x}"
    return f"{prefix}{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def approval_request(
    ctx: StepContext,
    result: ChatResult,
    calls: Sequence[tuple[ToolCall, dict[str, Any] | None]],
    gated: set[str],
    thinking: str | None,
    assistant_id: str,
) -> StepResult:
    """Rows for a response with approval-gated calls (their call ids in `gated`); nothing runs now.

    The `approval` row's id is the step's assistant id minus one, as Letta numbers it, so it is the id its calls'
    streamed fragments carried whatever came before or after them. Only gated calls: that row also holds the
    response's reasoning/text (streamed under the assistant id, as Letta streams them). Mixed: an `assistant` row
    (the assistant id) with the reasoning/text and the ungated calls comes first; `approvals.resume_approval`
    runs the ungated calls after the approved ones. An approval request's otid is its id.
    """
    v2 = is_v2(ctx.agent.agent_type)
    content = assistant_content(result, thinking, v2)
    held = [stored_call(c.id, c.name, _requested(a, v2), c.arguments) for c, a in calls if c.id not in gated]
    asked = [stored_call(c.id, c.name, _requested(a, v2), c.arguments) for c, a in calls if c.id in gated]
    rows: list[orm.Message] = []
    approval_id = previous_message_id(assistant_id)
    if held:
        assistant = ctx.row("assistant", id=assistant_id, content=content, tool_calls=held)
        assistant.model = ctx.model
        rows.append(assistant)
        content = None
    request = ctx.row("approval", id=approval_id, otid=approval_id, content=content, tool_calls=asked)
    request.model = ctx.model
    rows.append(request)
    return StepResult(rows=rows, stop_reason="requires_approval")


async def handle_response(
    ctx: StepContext, result: ChatResult, allowed: Sequence[str], assistant_id: str
) -> StepResult:
    """Turn one LLM response into rows and a continuation decision.

    With parallel tool calls off (V2 agents always; V3 unless the config turns them on and no ordering rule
    exists) only the first call of a response is kept, as Letta does; otherwise every call runs (`tool_batch`).
    The calls are stored on the assistant row and their returns on one tool row, one content part each.
    """
    v2 = is_v2(ctx.agent.agent_type)
    if not result.tool_calls:
        return _handle_text(ctx, result, assistant_id, v2)
    kept = result.tool_calls if parallel_calls_enabled(ctx.agent) else result.tool_calls[:1]
    calls = [(call, parse_args(call)) for call in kept]
    thinking = next((str(a.pop(THINKING_PARAM)) for _, a in calls if a and THINKING_PARAM in a), None)
    if v2 and thinking is None and result.content:
        thinking = result.content  # a model not asked for `thinking` as an argument thinks in its content
    gated = {call.id for call, _ in calls if needs_approval(ctx, call.name)}
    if gated:
        return approval_request(ctx, result, calls, gated, thinking, assistant_id)
    step = StepResult()
    outcomes: list[tuple[ToolCall, ToolOutcome]] = []
    stored_calls: list[dict[str, Any]] = []
    continues: list[tuple[bool, str | None]] = []
    asked = [pop_heartbeat(args) for _, args in calls]
    # Every call is checked first, then they all run (tool_batch: side by side where the tools allow it), then
    # each is registered with the rules and decided on in call order, as Letta's V3 loop does.
    violations = [args is not None and call.name not in allowed for call, args in calls]
    refusals = [None if bad else prefill_error(ctx, c.name, a) for (c, a), bad in zip(calls, violations, strict=True)]
    planned = [PlannedCall(c.name, a, allowed, r) for (c, a), r in zip(calls, refusals, strict=True)]
    ran = await run_planned(ctx, planned)
    invalid = False
    decision: tuple[bool, str | None]
    for (call, args), heartbeat, violated, bad_prefill, outcome in zip(
        calls, asked, violations, refusals, ran, strict=True
    ):
        # The call is stored (and shown, and sent back to the model) with the rules' values laid over the model's,
        # as Letta's V3 loop stores it; a refused call keeps the model's own arguments.
        ran_args = args if violated or bad_prefill or args is None else {**args, **ctx.solver.prefilled_args(call.name)}
        if not violated and not bad_prefill:
            # As in Letta, a refused call is not history: the rule that refused it still applies next time.
            ctx.solver.register_call(call.name)
        step.tools_called.append(call.name)
        outcomes.append((call, outcome))
        if bad_prefill:
            invalid, decision = True, (False, None)
        elif v2:
            decision = _v2_decision(ctx, call.name, heartbeat, violated, outcome.success)
        else:
            decision = _v3_decision(ctx, call.name, violated)
        if v2 and ctx.final_step:
            decision = (False, None)
        continues.append(decision)
        stored_args = ran_args
        if v2 and ran_args is not None:  # as Letta's V2 loop: every stored call says whether the loop went on
            stored_args = {**ran_args, HEARTBEAT_PARAM: decision[0]}
        stored_calls.append(stored_call(call.id, call.name, stored_args, call.arguments))
    assistant = ctx.row("assistant", id=assistant_id, content=assistant_content(result, thinking, v2))
    assistant.tool_calls = stored_calls
    assistant.model = ctx.model
    step.rows = [assistant, tool_returns_row(ctx, outcomes)]
    step.should_continue = any(go for go, _ in continues)
    if step.should_continue:
        reason = next((r for go, r in continues if go and r), None)
        if v2 and reason:
            step.rows.append(ctx.heartbeat_row(reason))
        return step
    if invalid:
        step.stop_reason = "invalid_tool_call"
        return step
    if v2 and ctx.final_step:
        step.stop_reason = "max_steps"
        return step
    return ending(ctx, step, [c.name for c, _ in calls], any(asked), v2)


def tool_returns_row(ctx: StepContext, outcomes: Sequence[tuple[ToolCall, ToolOutcome]]) -> orm.Message:
    """The one tool row of a step: a content part and a structured return per call, in call order (the row's
    own tool_call_id and name are the first call's)."""
    return merged_tool_rows([ctx.tool_row(call.id, call.name, outcome) for call, outcome in outcomes])


def merged_tool_rows(rows: Sequence[orm.Message]) -> orm.Message:
    """One tool row holding the returns of `rows` (tool_return_row's, in call order): a content part and a
    structured return each, the first row's own tool_call_id and name."""
    row = rows[0]
    if len(rows) > 1:
        row.content = [part for r in rows for part in r.content or []]
        row.tool_returns = [item for r in rows for item in r.tool_returns or []]
    return row


def _requested(args: dict[str, Any] | None, v2: bool) -> dict[str, Any] | None:
    """A call's arguments as stored while it waits: V2 keeps whether the model asked for a heartbeat (as a bool,
    as Letta does), since that decides whether the loop goes on once the call is answered; V3 drops it."""
    if args is None:
        return None
    kept = {k: v for k, v in args.items() if k != HEARTBEAT_PARAM}
    return {**kept, HEARTBEAT_PARAM: heartbeat_flag(args.get(HEARTBEAT_PARAM, False))} if v2 else kept


def answered_decision(
    ctx: StepContext, name: str, heartbeat: bool, success: bool, *, v2: bool
) -> tuple[bool, str | None]:
    """Whether the loop goes on after an answered (approved or held) call: V2 by its own rules and the
    model's heartbeat, V3 unless the tool is terminal."""
    if v2:
        return _v2_decision(ctx, name, heartbeat, False, success)
    return (not ctx.solver.is_terminal(name), None)


def ending(ctx: StepContext, step: StepResult, names: Sequence[str], asked: bool, v2: bool) -> StepResult:
    """Set the stop reason of a step that does not go on (unless a required-before-exit tool is still uncalled:
    then V2 goes on with a heartbeat, V3 after a tool call without one, as Letta's loops do)."""
    step.stop_reason = "tool_rule" if any(ctx.solver.is_terminal(n) for n in names) else "end_turn"
    if v2 and step.stop_reason == "tool_rule":
        # V2 reports tool_rule only when the model asked to go on; a plain terminal send_message is end_turn.
        step.stop_reason = "tool_rule" if asked else "end_turn"
    return _require_before_exit(ctx, step, v2, heartbeat=v2)


def _v3_decision(ctx: StepContext, name: str, violated: bool) -> tuple[bool, str | None]:
    # V3 continues after any call except a terminal one that ran (a refused call never ends the turn); it writes
    # no heartbeat rows.
    return (violated or not ctx.solver.is_terminal(name), None)


def _v2_decision(
    ctx: StepContext, name: str, heartbeat: bool, violated: bool, success: bool
) -> tuple[bool, str | None]:
    """Letta's V2 order: violation, terminal, child rule, continue rule, the model's own heartbeat, and last a
    required-before-exit tool still uncalled (decided here, as Letta does, so the stored call says the loop went
    on)."""
    if violated:
        return True, HEARTBEAT_VIOLATION
    if not ctx.solver.is_terminal(name):  # a terminal tool skips the rules and the heartbeat, not the last check
        if ctx.solver.has_children(name):
            return True, HEARTBEAT_CHILD_RULE
        if ctx.solver.is_continue(name):
            return True, HEARTBEAT_CONTINUE_RULE
        if heartbeat:
            return True, HEARTBEAT_REQUESTED if success else HEARTBEAT_FAILED
    if missing := ctx.solver.uncalled_required_before_exit(list(ctx.tools)):
        return True, required_before_exit_v2_reason(missing)
    return False, None


def _require_before_exit(ctx: StepContext, step: StepResult, v2: bool, *, heartbeat: bool = True) -> StepResult:
    missing = ctx.solver.uncalled_required_before_exit(list(ctx.tools))
    if not missing:
        return step
    if heartbeat:
        reason = required_before_exit_v2_reason(missing) if v2 else required_before_exit_reason(missing)
        step.rows.append(ctx.heartbeat_row(reason))
    step.should_continue, step.stop_reason = True, None
    return step


def _handle_text(ctx: StepContext, result: ChatResult, assistant_id: str, v2: bool) -> StepResult:
    """A response without tool calls: V2 fails (no_tool_call); V3 ends the turn, storing the text if any.

    An empty response stores nothing (Letta does not persist a no-op), unless a required-before-exit tool is
    still uncalled: then the loop goes on with a heartbeat.
    """
    if v2:
        return StepResult(stop_reason="no_tool_call")
    content = assistant_content(result, None, False)
    step = StepResult(stop_reason="end_turn")
    if content:
        row = ctx.row("assistant", id=assistant_id, content=content)
        row.model = ctx.model
        step.rows.append(row)
    step = _require_before_exit(ctx, step, v2)
    if step.stop_reason == "end_turn" and content and result.finish_reason == "length":
        step.stop_reason = "max_tokens_exceeded"
    return step
