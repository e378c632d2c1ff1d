"""The tool-rule solver: which tools the model may call next, and how rules steer the loop.

Pure and synchronous: it holds the rules and the names of the tools called so far in the current request, and
answers questions about them. A new solver is built per request, so counts and "first call" reset per request.

Allowed tools for the next call:
1. Before the first call of the request, if `run_first` rules exist, only those tools.
2. Otherwise the intersection of what every child, conditional, max-count and parent rule permits, limited to
   the tools the agent has.
3. If that leaves nothing, every available tool (Letta's loop does the same rather than stalling).
Continue, terminal, required-before-exit and approval rules never narrow the set; they act on loop flow.
"""

import json
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from memlet.tools.rules import (
    ChildToolRule,
    ConditionalToolRule,
    ContinueToolRule,
    InitToolRule,
    MaxCountPerStepToolRule,
    ParentToolRule,
    RequiredBeforeExitToolRule,
    RequiresApprovalToolRule,
    TerminalToolRule,
    ToolRule,
    parse_tool_rules,
)

RULES_SECTION_DESCRIPTION = (
    "These rules govern how you use your tools. Follow them so that tools run correctly and the workflow "
    "proceeds as intended. One response may contain several tool calls."
)

_R = TypeVar("_R")
_NarrowingRule = ChildToolRule | ConditionalToolRule | MaxCountPerStepToolRule | ParentToolRule


class ToolRulesSolver:
    """Rule state for one request: call `register_call` once per executed tool call."""

    def __init__(self, rules: Iterable[ToolRule] | None = None) -> None:
        self.rules: list[ToolRule] = list(rules or [])
        self._history: list[str] = []

    @classmethod
    def from_stored(cls, stored: Sequence[dict[str, Any]] | None) -> "ToolRulesSolver":
        """A solver for an agent's rules as stored (the `tool_rules` JSON column)."""
        return cls(parse_tool_rules(list(stored or [])))

    @property
    def history(self) -> tuple[str, ...]:
        """Names of the tools called so far in this request, oldest first."""
        return tuple(self._history)

    @property
    def last_tool(self) -> str | None:
        """The most recently called tool, or None before the first call."""
        return self._history[-1] if self._history else None

    def register_call(self, name: str) -> None:
        """Record one tool call. Call it exactly once per call, or max-count limits are reached too early."""
        self._history.append(name)

    # -- allowed set ---------------------------------------------------------------------------------------

    def allowed_tools(
        self, available: Sequence[str], last_return: str | None = None, *, fallback_to_all: bool = True
    ) -> list[str]:
        """Names from `available` (in its order) that the next call may use.

        `last_return` is the previous tool's return text; a packed `{"status", "message", "time"}` envelope is
        unwrapped. With `fallback_to_all`, an empty result becomes every available tool, as in Letta's loop.
        """
        allowed = self._narrowed(available, last_return)
        if not allowed and fallback_to_all:
            return list(dict.fromkeys(available))
        return allowed

    def _narrowed(self, available: Sequence[str], last_return: str | None) -> list[str]:
        names = list(dict.fromkeys(available))
        init_names = {r.tool_name for r in self._rules_of(InitToolRule)}
        if not self._history and init_names:
            return [n for n in names if n in init_names]
        allowed = set(names)
        for rule in self._narrowing_rules():
            allowed &= self._permitted_by(rule, set(names), last_return)
        return [n for n in names if n in allowed]

    def _permitted_by(self, rule: _NarrowingRule, available: set[str], last_return: str | None) -> set[str]:
        last = self.last_tool
        if isinstance(rule, ChildToolRule):
            return set(rule.children) if last == rule.tool_name else available
        if isinstance(rule, ParentToolRule):
            return set(rule.children) if last == rule.tool_name else available - set(rule.children)
        if isinstance(rule, MaxCountPerStepToolRule):
            used = self._history.count(rule.tool_name)
            return available - {rule.tool_name} if used >= rule.max_count_limit else available
        if last != rule.tool_name:
            return available
        return _conditional_children(rule, available, last_return)

    def must_force_tool_call(self) -> bool:
        """True while a constraining rule is active: run_first before the first call, or a child, conditional
        or parent rule whose tool was the last call. The caller then sets `tool_choice` to required."""
        if not self._history:
            return bool(self._rules_of(InitToolRule))
        forcing = (ChildToolRule, ConditionalToolRule, ParentToolRule)
        return any(isinstance(r, forcing) and r.tool_name == self.last_tool for r in self.rules)

    # -- loop flow -----------------------------------------------------------------------------------------

    def is_terminal(self, name: str) -> bool:
        """Whether calling `name` ends the loop (an `exit_loop` rule)."""
        return any(r.tool_name == name for r in self._rules_of(TerminalToolRule))

    def is_continue(self, name: str) -> bool:
        """Whether calling `name` keeps the loop going (a `continue_loop` rule)."""
        return any(r.tool_name == name for r in self._rules_of(ContinueToolRule))

    def has_children(self, name: str) -> bool:
        """Whether `name` has a child, conditional or max-count-per-step rule; V2 keeps looping after such a call
        (Letta counts a max-count rule among the child rules for this)."""
        kinds = (ChildToolRule, ConditionalToolRule, MaxCountPerStepToolRule)
        return any(r.tool_name == name for r in self._rules_of(*kinds))

    def requires_approval(self, name: str) -> bool:
        """Whether calls to `name` must wait for a human approval."""
        return any(r.tool_name == name for r in self._rules_of(RequiresApprovalToolRule))

    def terminal_tool_names(self) -> set[str]:
        """Tools with an `exit_loop` rule (V2 gives them no `request_heartbeat` parameter)."""
        return {r.tool_name for r in self._rules_of(TerminalToolRule)}

    def has_non_approval_rules(self) -> bool:
        """Whether any rule other than `requires_approval` exists; parallel tool calls are off if so."""
        return any(not isinstance(r, RequiresApprovalToolRule) for r in self.rules)

    def uncalled_required_before_exit(self, available: Iterable[str] | None = None) -> list[str]:
        """Required-before-exit tools not yet called this request, in rule order, limited to `available`."""
        pool = set(available) if available is not None else None
        names = dict.fromkeys(r.tool_name for r in self._rules_of(RequiredBeforeExitToolRule))
        return [n for n in names if n not in self._history and (pool is None or n in pool)]

    def prefilled_args(self, name: str) -> dict[str, Any]:
        """Arguments the rules fix for a call to `name` now; they override the model's values for those keys.

        run_first `args` apply to the first call only; a child rule's `child_arg_nodes` apply right after its
        tool. Later rules win on overlapping keys.
        """
        merged: dict[str, Any] = {}
        if not self._history:
            for init in self._rules_of(InitToolRule):
                if init.tool_name == name and init.args:
                    merged.update(init.args)
        for child in self._rules_of(ChildToolRule):
            if child.tool_name == self.last_tool:
                merged.update(child.child_args().get(name, {}))
        return merged

    # -- text shown to the model ---------------------------------------------------------------------------

    def violation_message(self, name: str, allowed: Sequence[str]) -> str:
        """The error tool return for a call to `name` outside `allowed`, with hints naming the likely rules."""
        message = f"[ToolConstraintError] Cannot call {name}, valid tools include: {list(allowed)!r}."
        hints = self._hints_for(name)
        if not hints:
            return message
        return message + "\nHint: these rules may have been broken:\n" + "\n".join(f"\t- {h}" for h in hints)

    def _hints_for(self, name: str) -> list[str]:
        previous = self.last_tool
        hints: list[str] = []
        for rule in self._prompt_rules():
            involved = rule.tool_name in (name, previous) or (
                isinstance(rule, ParentToolRule) and name in rule.children
            )
            sentence = _rule_sentence(rule)
            if involved and sentence:
                hints.append(sentence)
        return hints

    def render_rules_prompt(self) -> str:
        """The `<tool_usage_rules>` section for the system prompt, or "" when no rule has anything to say.

        The caller places it after `</memory_blocks>`, separated by a blank line.
        """
        sentences = [s for s in (_rule_sentence(r) for r in self._prompt_rules()) if s]
        if not sentences:
            return ""
        body = "\n".join(f"<tool_rule>\n{s}\n</tool_rule>" for s in sentences)
        return f"<tool_usage_rules>\n{RULES_SECTION_DESCRIPTION}\n\n{body}\n</tool_usage_rules>"

    # -- helpers -------------------------------------------------------------------------------------------

    def _rules_of(self, *kinds: type[_R]) -> list[_R]:
        return [r for r in self.rules if isinstance(r, kinds)]

    def _narrowing_rules(self) -> list[_NarrowingRule]:
        return [
            r
            for r in self.rules
            if isinstance(r, ChildToolRule | ConditionalToolRule | MaxCountPerStepToolRule | ParentToolRule)
        ]

    def _prompt_rules(self) -> list[ToolRule]:
        # Same grouping order as Letta's prompt: init, continue, child-like, parent, terminal.
        groups: tuple[tuple[type, ...], ...] = (
            (InitToolRule,),
            (ContinueToolRule,),
            (ChildToolRule, ConditionalToolRule, MaxCountPerStepToolRule),
            (ParentToolRule,),
            (TerminalToolRule,),
        )
        return [r for kinds in groups for r in self.rules if isinstance(r, kinds)]


def _rule_sentence(rule: ToolRule) -> str | None:
    """One plain sentence describing the rule to the model (None for rules with nothing to say)."""
    if isinstance(rule, InitToolRule):
        return f"Start by calling {rule.tool_name}."
    if isinstance(rule, ContinueToolRule):
        return f"After calling {rule.tool_name}, keep going: it does not end your response."
    if isinstance(rule, ChildToolRule):
        return f"Right after {rule.tool_name}, call one of: {', '.join(rule.children)}."
    if isinstance(rule, ConditionalToolRule):
        return f"The output of {rule.tool_name} decides which tool you call next."
    if isinstance(rule, MaxCountPerStepToolRule):
        return f"Call {rule.tool_name} no more than {rule.max_count_limit} time(s) per response."
    if isinstance(rule, ParentToolRule):
        return f"Call {', '.join(rule.children)} only immediately after {rule.tool_name}."
    if isinstance(rule, TerminalToolRule):
        return f"Calling {rule.tool_name} ends your response and hands control back."
    return None


def _conditional_children(rule: ConditionalToolRule, available: set[str], last_return: str | None) -> set[str]:
    output = _unwrap_return(last_return)
    if output is not None:
        for key, child in rule.child_output_mapping.items():
            if output_matches(output, key):
                return {child}
    if rule.require_output_mapping:
        return set()
    return {rule.default_child} if rule.default_child else available


def _unwrap_return(last_return: str | None) -> str | None:
    """The tool's own output: the `message` of a packed tool-return envelope, or the text itself."""
    if last_return is None:
        return None
    try:
        packed = json.loads(last_return)
    except ValueError:
        return last_return
    if isinstance(packed, dict) and "message" in packed and "status" in packed:
        inner = packed["message"]
        return inner if isinstance(inner, str) else json.dumps(inner)
    return last_return


def output_matches(output: str, key: Any) -> bool:
    """Compare a tool output with a conditional mapping key: bool keys match "true"/"false" (any case),
    int and float keys match the parsed number, anything else matches by string equality."""
    if isinstance(key, bool):
        return output.strip().lower() == ("true" if key else "false")
    if isinstance(key, int):
        try:
            return int(output) == key
        except ValueError:
            return False
    if isinstance(key, float):
        try:
            return float(output) == key
        except ValueError:
            return False
    return output == str(key)
