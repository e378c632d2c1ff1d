"""One step of the loop after the LLM answered: turn the response into rows, run the tools, decide what is next.

Nothing here touches the database except through tools (conversation_search reads); the runner commits the rows
this module builds. Every tool call gets exactly one tool-return row: a result, an error, or a rule violation.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memlet import ids
from memlet.config import Settings
from memlet.db import models as orm
from memlet.llm.client import ChatResult, ToolCall
from memlet.loop.context import HEARTBEAT_PARAM, THINKING_PARAM, is_v2
from memlet.loop.tool_rules import ToolRulesSolver
from memlet.messages.packing import pack_heartbeat, pack_tool_return
from memlet.tool_exec.memory_tools import ToolContext
from memlet.tool_exec.registry import ToolOutcome, execute_tool, failure

HIDDEN = "[This is an automated system message hidden from the user] "
HEARTBEAT_CONTINUE_RULE = HIDDEN + "Continuing: continue tool rule."
HEARTBEAT_CHILD_RULE = HIDDEN + "Continuing: child tool rule."
HEARTBEAT_VIOLATION = HIDDEN + "Continuing: tool rule violation."
HEARTBEAT_REQUESTED = HIDDEN + "Function called using request_heartbeat=true, returning control"
HEARTBEAT_FAILED = HIDDEN + "Function call failed, returning control"
DENIAL_PREFIX = "Error: request to call tool denied. User reason: "


def required_before_exit_reason(names: Sequence[str]) -> str:
    return HIDDEN + f"ToolRuleViolated: You must call {', '.join(names)} at least once to exit the loop."


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
        packed = pack_tool_return(outcome.success, outcome.value, timezone=self.agent.timezone)
        status = "success" if outcome.success else "error"
        stored_return = {
            "tool_call_id": call_id,
            "status": status,
            "stdout": outcome.stdout or None,
            "stderr": outcome.stderr or None,
            "func_response": packed,
        }
        return self.row(
            "tool",
            name=name,
            tool_call_id=call_id,
            content=[{"type": "text", "text": packed}],
            tool_returns=[stored_return],
        )

    def heartbeat_row(self, reason: str) -> orm.Message:
        return self.row(
            "user", content=[{"type": "text", "text": pack_heartbeat(reason, timezone=self.agent.timezone)}]
        )


def parse_args(call: ToolCall) -> dict[str, Any] | None:
    """The call's arguments as a dict, or None when the model sent something that is not a JSON object."""
    try:
        args = json.loads(call.arguments or "{}", strict=False)
    except ValueError:
        return None
    return args if isinstance(args, dict) else None


def _stored_call(call_id: str, name: str, args: dict[str, Any] | None, raw: str) -> dict[str, Any]:
    arguments = json.dumps(args, ensure_ascii=False) if args is not None else raw
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_content(result: ChatResult, thinking: str | None, v2: bool) -> list[dict[str, Any]] | None:
    """Stored content of the assistant row: native reasoning first, then text (V2: the inner thoughts)."""
    parts: list[dict[str, Any]] = []
    if result.reasoning:
        parts.append({"type": "reasoning", "reasoning": result.reasoning, "is_native": True, "signature": None})
    text = thinking if v2 else result.content
    if text:
        parts.append({"type": "text", "text": text})
    return parts or None


def needs_approval(ctx: StepContext, name: str) -> bool:
    tool = ctx.tools.get(name)
    default = bool(tool is not None and tool.default_requires_approval)
    return name in ctx.client_tools or ctx.solver.requires_approval(name) or default


async def run_call(ctx: StepContext, name: str, args: dict[str, Any] | None, allowed: Sequence[str]) -> ToolOutcome:
    """Check and execute one call; rule violations, unknown tools and bad JSON become error outcomes."""
    if args is None:
        return failure(f"Error: the arguments of {name} are not a valid JSON object.")
    if name not in allowed:
        return failure(ctx.solver.violation_message(name, allowed))
    tool = ctx.tools.get(name)
    if tool is None:
        return failure(f"Error: tool {name} not found.")
    return await execute_tool(ctx.tool_ctx, tool, {**args, **ctx.solver.prefilled_args(name)}, ctx.settings)


async def handle_response(
    ctx: StepContext, result: ChatResult, allowed: Sequence[str], assistant_id: str
) -> StepResult:
    """Turn one LLM response into rows and a continuation decision."""
    v2 = is_v2(ctx.agent.agent_type)
    if not result.tool_calls:
        return _handle_text(ctx, result, assistant_id, v2)
    calls = [(call, parse_args(call)) for call in result.tool_calls]
    thinking = next((str(a.pop(THINKING_PARAM)) for _, a in calls if a and THINKING_PARAM in a), None)
    if any(needs_approval(ctx, call.name) for call, _ in calls):
        stored = [_stored_call(c.id, c.name, _loop_free(a), c.arguments) for c, a in calls]
        # Letta gives the approval request the id just before the assistant id it would have used; ours is fresh.
        row = ctx.row("approval", id=assistant_id, content=assistant_content(result, thinking, v2), tool_calls=stored)
        row.otid = row.id.removeprefix(f"{ids.Prefix.MESSAGE}-")
        return StepResult(rows=[row], stop_reason="requires_approval")
    step = StepResult()
    returns: list[orm.Message] = []
    stored_calls: list[dict[str, Any]] = []
    continues: list[tuple[bool, str | None]] = []
    asked: list[bool] = []
    for call, args in calls:
        heartbeat = bool(args.pop(HEARTBEAT_PARAM, False)) if args is not None else False
        asked.append(heartbeat)
        violated = args is not None and call.name not in allowed
        outcome = await run_call(ctx, call.name, args, allowed)
        ctx.solver.register_call(call.name)
        step.tools_called.append(call.name)
        returns.append(ctx.tool_row(call.id, call.name, outcome))
        decision = _v2_decision(ctx, call.name, heartbeat, violated, outcome.success) if v2 else _v1_decision(ctx, call)
        continues.append(decision)
        stored_args = args
        if v2 and args is not None:
            stored_args = {**args, HEARTBEAT_PARAM: decision[0]} if not ctx.solver.is_terminal(call.name) else args
        stored_calls.append(_stored_call(call.id, call.name, stored_args, call.arguments))
    assistant = ctx.row("assistant", id=assistant_id, content=assistant_content(result, thinking, v2))
    assistant.tool_calls = stored_calls
    assistant.model = result.model
    step.rows = [assistant, *returns]
    step.should_continue = any(go for go, _ in continues)
    if step.should_continue:
        reason = next((r for go, r in continues if go and r), None)
        if v2 and reason:
            step.rows.append(ctx.heartbeat_row(reason))
        return step
    step.stop_reason = "tool_rule" if any(ctx.solver.is_terminal(c.name) for c, _ in calls) else "end_turn"
    if v2 and step.stop_reason == "tool_rule":
        # V2 reports tool_rule only when the model asked to go on; a plain terminal send_message is end_turn.
        step.stop_reason = "tool_rule" if any(asked) else "end_turn"
    return _require_before_exit(ctx, step, v2)


def _loop_free(args: dict[str, Any] | None) -> dict[str, Any] | None:
    if args is None:
        return None
    return {k: v for k, v in args.items() if k != HEARTBEAT_PARAM}


def _v1_decision(ctx: StepContext, call: ToolCall) -> tuple[bool, str | None]:
    return (not ctx.solver.is_terminal(call.name), None)


def _v2_decision(
    ctx: StepContext, name: str, heartbeat: bool, violated: bool, success: bool
) -> tuple[bool, str | None]:
    if violated:
        return True, HEARTBEAT_VIOLATION
    if ctx.solver.is_terminal(name):
        return False, None
    if heartbeat:
        return True, HEARTBEAT_REQUESTED
    if ctx.solver.is_continue(name):
        return True, HEARTBEAT_CONTINUE_RULE
    if ctx.solver.has_children(name):
        return True, HEARTBEAT_CHILD_RULE
    if not success:
        return True, HEARTBEAT_FAILED
    return False, None


def _require_before_exit(ctx: StepContext, step: StepResult, v2: bool) -> StepResult:
    missing = ctx.solver.uncalled_required_before_exit(list(ctx.tools))
    if not missing:
        return step
    step.rows.append(ctx.heartbeat_row(required_before_exit_reason(missing)))
    step.should_continue, step.stop_reason = True, None
    return step


def _handle_text(ctx: StepContext, result: ChatResult, assistant_id: str, v2: bool) -> StepResult:
    if v2:
        return StepResult(stop_reason="no_tool_call")
    content = assistant_content(result, None, False)
    step = StepResult(stop_reason="end_turn")
    if content:
        row = ctx.row("assistant", id=assistant_id, content=content)
        row.model = result.model
        step.rows.append(row)
        if result.finish_reason == "length":
            step.stop_reason = "max_tokens_exceeded"
            return step
    return _require_before_exit(ctx, step, v2)


# --- resuming after an approval request ------------------------------------------------------------------

NO_PENDING_APPROVAL = (
    "Cannot process approval response: No tool call is currently awaiting approval. Please send a regular "
    "message to interact with the agent."
)


def pending_approval(rows: Sequence[orm.Message]) -> orm.Message | None:
    """The approval request waiting at the end of the buffer, if any."""
    last = rows[-1] if rows else None
    return last if last is not None and last.role == "approval" and last.tool_calls else None


async def resume_approval(
    ctx: StepContext, request: orm.Message, items: Sequence[Any], allowed: Sequence[str]
) -> StepResult:
    """Execute approved calls, turn denials and client results into tool returns; the loop then continues.

    `items` are ApprovalReturn / ToolReturn models whose tool_call_ids exactly match the request's calls.
    """
    by_id = {getattr(item, "tool_call_id", None): item for item in items}
    approvals: list[dict[str, Any]] = []
    returns: list[orm.Message] = []
    for call in request.tool_calls or []:
        call_id, name = call["id"], call["function"]["name"]
        item = by_id[call_id]
        if getattr(item, "type", "") == "tool":
            text = item.tool_return if isinstance(item.tool_return, str) else json.dumps(item.tool_return)
            outcome = ToolOutcome(item.status == "success", text, item.stdout or [], item.stderr or [])
            approvals.append(
                {
                    "type": "tool",
                    "tool_call_id": call_id,
                    "status": item.status,
                    "stdout": item.stdout,
                    "stderr": item.stderr,
                    "func_response": pack_tool_return(outcome.success, text, timezone=ctx.agent.timezone),
                }
            )
        elif item.approve:
            approvals.append({"type": "approval", "tool_call_id": call_id, "approve": True, "reason": item.reason})
            args = parse_args(ToolCall(call_id, name, call["function"]["arguments"]))
            outcome = await run_call(ctx, name, args, [*list(allowed), name])
        else:
            approvals.append({"type": "approval", "tool_call_id": call_id, "approve": False, "reason": item.reason})
            outcome = failure(f"{DENIAL_PREFIX}{item.reason}")
        ctx.solver.register_call(name)
        returns.append(ctx.tool_row(call_id, name, outcome))
    first = next((a for a in approvals if a["type"] == "approval"), None)
    response = ctx.row(
        "approval",
        approvals=approvals,
        approve=first["approve"] if first else None,
        approval_request_id=first["tool_call_id"] if first else None,
        denial_reason=first["reason"] if first else None,
    )
    response.step_id = request.step_id
    for row in returns:
        row.step_id = request.step_id
    names = [c["function"]["name"] for c in request.tool_calls or []]
    terminal = any(ctx.solver.is_terminal(n) for n in names)
    return StepResult(
        rows=[response, *returns],
        should_continue=not terminal,
        stop_reason="tool_rule" if terminal else None,
        tools_called=names,
    )
