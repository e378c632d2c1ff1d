"""ToolRulesSolver as the loop reads it: terminal/continue/approval lookups, prefilled arguments, the text of a violation, and the rules prompt."""

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
    ToolCallNode,
)
from memlet.tools.solver import ToolRulesSolver
from tests.unit.tool_rules_support import TOOLS


class TestLoopFlow:
    def test_terminal_continue_approval_lookups(self) -> None:
        solver = ToolRulesSolver(
            [
                TerminalToolRule(tool_name="end"),
                ContinueToolRule(tool_name="next"),
                RequiresApprovalToolRule(tool_name="helper"),
            ]
        )
        assert solver.is_terminal("end") is True
        assert solver.is_terminal("next") is False
        assert solver.is_continue("next") is True
        assert solver.is_continue("end") is False
        assert solver.requires_approval("helper") is True
        assert solver.requires_approval("end") is False
        assert solver.terminal_tool_names() == {"end"}

    def test_has_children(self) -> None:
        solver = ToolRulesSolver(
            [
                ChildToolRule(tool_name="start", children=["next"]),
                ConditionalToolRule(tool_name="helper", child_output_mapping={"a": "end"}),
                MaxCountPerStepToolRule(tool_name="final", max_count_limit=1),
            ]
        )
        assert solver.has_children("start") is True
        assert solver.has_children("helper") is True
        # Letta counts a max-count-per-step rule among the child rules: a V2 agent keeps looping after the call.
        assert solver.has_children("final") is True

    def test_required_before_exit_tracks_calls(self) -> None:
        solver = ToolRulesSolver(
            [RequiredBeforeExitToolRule(tool_name="final"), RequiredBeforeExitToolRule(tool_name="helper")]
        )
        assert solver.uncalled_required_before_exit() == ["final", "helper"]
        solver.register_call("helper")
        assert solver.uncalled_required_before_exit(TOOLS) == ["final"]
        solver.register_call("final")
        assert solver.uncalled_required_before_exit(TOOLS) == []

    def test_required_before_exit_ignores_unattached_tools(self) -> None:
        solver = ToolRulesSolver([RequiredBeforeExitToolRule(tool_name="ghost")])
        assert solver.uncalled_required_before_exit(TOOLS) == []

    def test_parallel_calls_blocked_only_by_non_approval_rules(self) -> None:
        assert ToolRulesSolver([RequiresApprovalToolRule(tool_name="a")]).has_non_approval_rules() is False
        assert ToolRulesSolver([TerminalToolRule(tool_name="a")]).has_non_approval_rules() is True


class TestPrefilledArgs:
    def test_init_args_apply_to_first_call_only(self) -> None:
        solver = ToolRulesSolver([InitToolRule(tool_name="start", args={"x": 1, "y": "s"})])
        assert solver.prefilled_args("start") == {"x": 1, "y": "s"}
        assert solver.prefilled_args("next") == {}
        solver.register_call("start")
        assert solver.prefilled_args("start") == {}

    def test_child_arg_nodes_apply_after_parent(self) -> None:
        rule = ChildToolRule(
            tool_name="start",
            children=["next", "helper"],
            child_arg_nodes=[ToolCallNode(name="next", args={"q": "v"}), ToolCallNode(name="helper")],
        )
        solver = ToolRulesSolver([rule])
        assert solver.prefilled_args("next") == {}
        solver.register_call("start")
        assert solver.prefilled_args("next") == {"q": "v"}
        assert solver.prefilled_args("helper") == {}

    def test_later_rule_wins_on_overlap(self) -> None:
        solver = ToolRulesSolver(
            [
                ChildToolRule(
                    tool_name="start", children=["next"], child_arg_nodes=[ToolCallNode(name="next", args={"a": 1})]
                ),
                ChildToolRule(
                    tool_name="start",
                    children=["next"],
                    child_arg_nodes=[ToolCallNode(name="next", args={"a": 2, "b": 3})],
                ),
            ]
        )
        solver.register_call("start")
        assert solver.prefilled_args("next") == {"a": 2, "b": 3}


class TestViolationMessage:
    def test_plain_message_without_related_rules(self) -> None:
        solver = ToolRulesSolver([])
        assert (
            solver.violation_message("end", ["start", "next"])
            == "[ToolConstraintError] Cannot call end, valid tools include: ['start', 'next']."
        )

    def test_hints_name_rules_of_called_and_previous_tool(self) -> None:
        solver = ToolRulesSolver(
            [
                ChildToolRule(tool_name="start", children=["next"]),
                TerminalToolRule(tool_name="end"),
                ContinueToolRule(tool_name="helper"),
            ]
        )
        solver.register_call("start")
        text = solver.violation_message("end", ["next"])
        first, *hints = text.split("\n")
        assert first == "[ToolConstraintError] Cannot call end, valid tools include: ['next']."
        assert len(hints) == 3
        assert hints[1].startswith("\t- ")
        assert "start" in hints[1]
        assert "next" in hints[1]
        assert hints[2].startswith("\t- ")
        assert "end" in hints[2]
        assert "helper" not in text

    def test_parent_rule_hint_when_child_called_too_early(self) -> None:
        solver = ToolRulesSolver([ParentToolRule(tool_name="start", children=["next"])])
        text = solver.violation_message("next", ["start"])
        assert "only immediately after start" in text


class TestRenderRulesPrompt:
    def test_empty_without_renderable_rules(self) -> None:
        solver = ToolRulesSolver([RequiresApprovalToolRule(tool_name="a"), RequiredBeforeExitToolRule(tool_name="b")])
        assert solver.render_rules_prompt() == ""

    def test_one_tool_rule_block_per_rule_in_group_order(self) -> None:
        solver = ToolRulesSolver(
            [
                TerminalToolRule(tool_name="end"),
                ChildToolRule(tool_name="start", children=["next", "helper"]),
                InitToolRule(tool_name="start"),
                MaxCountPerStepToolRule(tool_name="helper", max_count_limit=2),
                RequiresApprovalToolRule(tool_name="final"),
            ]
        )
        text = solver.render_rules_prompt()
        assert text.startswith("<tool_usage_rules>\n")
        assert text.endswith("\n</tool_rule>\n</tool_usage_rules>")
        assert text.count("<tool_rule>\n") == 4
        blocks = text.split("<tool_rule>\n")[1:]
        assert "start" in blocks[0]
        assert "next, helper" in blocks[1]
        assert "2" in blocks[2]
        assert "helper" in blocks[2]
        assert "end" in blocks[3]
        assert "final" not in text
