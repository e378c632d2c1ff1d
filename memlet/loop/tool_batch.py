"""Running the calls of one step, as Letta's letta_v1 loop schedules them.

A step with one call runs it. A step with several runs every call whose tool has `enable_parallel_execution`
side by side first, then the others one after another in call order; the outcomes come back in call order
whatever the order they ran in, so the tool row and what the model reads next do not depend on it.

The turn's reads and writes go through one locked connection, which takes one statement at a time: the calls run
side by side get sessions of their own from the pool (`StepContext.pooled_sessionmaker`), and what they change in
the step's shared tool context is merged back when they are done.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from memlet.loop.builtin_tools import ToolContext
from memlet.loop.tool_dispatch import ToolOutcome, execute_tool, failure, message_for_model
from memlet.tools.prefill import PrefillError, merge_prefilled

if TYPE_CHECKING:  # response.py and approvals.py run their calls through this module
    from memlet.loop.response import StepContext


@dataclass
class PlannedCall:
    """One call to run: its name, the model's arguments (None: not a JSON object), the tools it may call, and
    why it is refused without running (the rules' prefilled arguments do not fit), if it is."""

    name: str
    args: dict[str, Any] | None
    allowed: Sequence[str]
    refusal: str | None = None


async def run_planned(ctx: "StepContext", calls: Sequence[PlannedCall]) -> list[ToolOutcome]:
    """The outcome of every call, in call order (see the module docstring for the order they run in)."""
    if len(calls) == 1:
        return [await _run(ctx, calls[0])]
    side_by_side = [i for i, call in enumerate(calls) if _parallel(ctx, call.name)]
    outcomes: list[ToolOutcome | None] = [None] * len(calls)
    if len(side_by_side) == 1:
        outcomes[side_by_side[0]] = await _run(ctx, calls[side_by_side[0]])
    elif side_by_side:
        contexts = [_own_context(ctx) for _ in side_by_side]
        tasks = [asyncio.ensure_future(_run(c, calls[i])) for c, i in zip(contexts, side_by_side, strict=True)]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # one failed: the others stop too (a cancel reaches them through gather already)
                task.cancel()
            raise
        finally:
            for own in contexts:
                _merge(ctx.tool_ctx, own.tool_ctx)
        for index, outcome in zip(side_by_side, results, strict=True):
            outcomes[index] = outcome
    for index, call in enumerate(calls):
        if outcomes[index] is None:
            outcomes[index] = await _run(ctx, call)
    return [outcome for outcome in outcomes if outcome is not None]


def prefill_error(ctx: "StepContext", name: str, args: dict[str, Any] | None) -> str | None:
    """Why the rules' prefilled arguments for this call do not fit the tool (None: they fit, or there are none)."""
    tool = ctx.tools.get(name)
    if args is None or tool is None:
        return None
    try:
        merge_prefilled(name, tool.json_schema, args, ctx.solver.prefilled_args(name))
    except PrefillError as exc:
        return f"Error: the tool rules give {name} arguments it does not accept: {exc}"
    return None


async def _run(ctx: "StepContext", call: PlannedCall) -> ToolOutcome:
    """Run one planned call (`tool_batch`): a refused one only becomes its error."""
    if call.refusal is not None:
        return failure(call.refusal)
    return await run_call(ctx, call.name, call.args, call.allowed)


async def run_call(ctx: "StepContext", name: str, args: dict[str, Any] | None, allowed: Sequence[str]) -> ToolOutcome:
    """Check and execute one call; rule violations, unknown tools, bad JSON and bad prefilled arguments become
    error outcomes."""
    if args is None:
        return failure(f"Error: the arguments of {name} are not a valid JSON object.")
    if name not in allowed:
        return failure(ctx.solver.violation_message(name, allowed))
    tool = ctx.tools.get(name)
    if tool is None:
        return failure(f"Error: tool {name} not found.")
    if (bad := prefill_error(ctx, name, args)) is not None:
        return failure(bad)
    outcome = await execute_tool(ctx.tool_ctx, tool, {**args, **ctx.solver.prefilled_args(name)}, ctx.settings)
    return message_for_model(tool, outcome)


def _parallel(ctx: "StepContext", name: str) -> bool:
    tool = ctx.tools.get(name)
    return bool(tool is not None and tool.enable_parallel_execution)


def _own_context(ctx: "StepContext") -> "StepContext":
    """`ctx` for one call run beside others: the same agent, blocks and change sets, sessions from the pool."""
    maker = ctx.pooled_sessionmaker or ctx.tool_ctx.sessionmaker
    return replace(ctx, tool_ctx=replace(ctx.tool_ctx, sessionmaker=maker))


def _merge(shared: ToolContext, own: ToolContext) -> None:
    """Carry back what a call run beside others flagged (the block change sets are the shared ones already)."""
    shared.archival_changed = shared.archival_changed or own.archival_changed
    shared.files_changed = shared.files_changed or own.files_changed
