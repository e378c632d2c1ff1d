"""ToolRulesSolver: which tools are allowed, conditional children, and when a call is forced."""

import pytest

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
    parse_tool_rules,
)
from memlet.tools.solver import ToolRulesSolver, output_matches
from tests.unit.tool_rules_support import TOOLS


class TestAllowedTools:
    def test_no_rules_allows_everything_in_order(self) -> None:
        assert ToolRulesSolver([]).allowed_tools(TOOLS) == TOOLS

    def test_init_rules_only_before_first_call(self) -> None:
        solver = ToolRulesSolver([InitToolRule(tool_name="start"), InitToolRule(tool_name="helper")])
        assert solver.allowed_tools(TOOLS) == ["start", "helper"]
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == TOOLS

    def test_init_tool_not_attached_falls_back_to_all(self) -> None:
        solver = ToolRulesSolver([InitToolRule(tool_name="missing")])
        assert solver.allowed_tools(TOOLS) == TOOLS
        assert solver.allowed_tools(TOOLS, fallback_to_all=False) == []

    def test_child_rule_limits_next_call_only(self) -> None:
        solver = ToolRulesSolver([ChildToolRule(tool_name="start", children=["next", "helper"])])
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next", "helper"]
        solver.register_call("next")
        assert solver.allowed_tools(TOOLS) == TOOLS

    def test_chain_of_child_rules(self) -> None:
        solver = ToolRulesSolver(
            [
                InitToolRule(tool_name="start"),
                ChildToolRule(tool_name="start", children=["next"]),
                ChildToolRule(tool_name="next", children=["final"]),
            ]
        )
        assert solver.allowed_tools(TOOLS) == ["start"]
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next"]
        solver.register_call("next")
        assert solver.allowed_tools(TOOLS) == ["final"]

    def test_children_limited_to_available(self) -> None:
        solver = ToolRulesSolver([ChildToolRule(tool_name="start", children=["next", "ghost"])])
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next"]

    def test_max_count_removes_tool_after_limit(self) -> None:
        solver = ToolRulesSolver([MaxCountPerStepToolRule(tool_name="start", max_count_limit=2)])
        solver.register_call("start")
        assert "start" in solver.allowed_tools(TOOLS)
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next", "helper", "final", "end"]

    def test_max_count_counts_each_registration_once(self) -> None:
        solver = ToolRulesSolver([MaxCountPerStepToolRule(tool_name="start", max_count_limit=3)])
        for _ in range(2):
            solver.register_call("start")
        assert "start" in solver.allowed_tools(TOOLS)
        solver.register_call("start")
        assert "start" not in solver.allowed_tools(TOOLS)

    def test_max_count_only_tool_exhausted_falls_back(self) -> None:
        solver = ToolRulesSolver([MaxCountPerStepToolRule(tool_name="start", max_count_limit=1)])
        solver.register_call("start")
        assert solver.allowed_tools(["start"], fallback_to_all=False) == []
        assert solver.allowed_tools(["start"]) == ["start"]

    def test_parent_rule_hides_children_until_parent_called(self) -> None:
        solver = ToolRulesSolver([ParentToolRule(tool_name="start", children=["next", "helper"])])
        assert solver.allowed_tools(TOOLS) == ["start", "final", "end"]
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next", "helper"]
        solver.register_call("next")
        assert solver.allowed_tools(TOOLS) == ["start", "final", "end"]

    def test_intersection_of_rules(self) -> None:
        solver = ToolRulesSolver(
            [
                ChildToolRule(tool_name="start", children=["next", "helper"]),
                MaxCountPerStepToolRule(tool_name="helper", max_count_limit=1),
            ]
        )
        solver.register_call("helper")
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == ["next"]

    def test_flow_rules_never_narrow(self) -> None:
        solver = ToolRulesSolver(
            [
                TerminalToolRule(tool_name="end"),
                ContinueToolRule(tool_name="start"),
                RequiredBeforeExitToolRule(tool_name="final"),
                RequiresApprovalToolRule(tool_name="helper"),
            ]
        )
        solver.register_call("start")
        assert solver.allowed_tools(TOOLS) == TOOLS


class TestConditional:
    @staticmethod
    def _after(rule: ConditionalToolRule, output: str | None) -> list[str]:
        solver = ToolRulesSolver([rule])
        solver.register_call(rule.tool_name)
        return solver.allowed_tools(TOOLS, output, fallback_to_all=False)

    def test_bool_keys_match_true_false(self) -> None:
        rule = ConditionalToolRule(tool_name="start", child_output_mapping={True: "end", False: "next"})
        assert self._after(rule, "true") == ["end"]
        assert self._after(rule, "False") == ["next"]

    def test_string_keys_from_json(self) -> None:
        rule = parse_tool_rules(
            [{"tool_name": "start", "type": "conditional", "child_output_mapping": {"yes": "end", "no": "next"}}]
        )[0]
        assert isinstance(rule, ConditionalToolRule)
        assert self._after(rule, "yes") == ["end"]
        assert self._after(rule, "no") == ["next"]

    def test_packed_envelope_is_unwrapped(self) -> None:
        rule = ConditionalToolRule(tool_name="start", child_output_mapping={"yes": "end"})
        packed = '{"status": "OK", "message": "yes", "time": "2026-01-01 10:00:00 AM UTC+0000"}'
        assert self._after(rule, packed) == ["end"]

    def test_numeric_keys_parse_output(self) -> None:
        rule = ConditionalToolRule(tool_name="start", child_output_mapping={1: "next", 2.5: "final"})
        assert self._after(rule, "1") == ["next"]
        assert self._after(rule, "2.5") == ["final"]

    def test_no_match_uses_default_child(self) -> None:
        rule = ConditionalToolRule(tool_name="start", default_child="helper", child_output_mapping={"a": "end"})
        assert self._after(rule, "zzz") == ["helper"]

    def test_no_match_no_default_allows_all(self) -> None:
        rule = ConditionalToolRule(tool_name="start", child_output_mapping={"a": "end"})
        assert self._after(rule, "zzz") == TOOLS

    def test_require_output_mapping_allows_nothing(self) -> None:
        rule = ConditionalToolRule(
            tool_name="start", default_child="helper", child_output_mapping={"a": "end"}, require_output_mapping=True
        )
        assert self._after(rule, "zzz") == []
        assert self._after(rule, None) == []

    def test_inactive_when_other_tool_was_last(self) -> None:
        solver = ToolRulesSolver([ConditionalToolRule(tool_name="start", child_output_mapping={"a": "end"})])
        solver.register_call("next")
        assert solver.allowed_tools(TOOLS, "a") == TOOLS

    @pytest.mark.parametrize(
        ("output", "key", "expected"),
        [
            ("TRUE", True, True),
            ("true", False, False),
            ("3", 3, True),
            ("3.0", 3, False),
            ("abc", 3, False),
            ("3.0", 3.0, True),
            ("x", 1.5, False),
            ("True", "true", False),
            ("hello", "hello", True),
        ],
    )
    def test_output_matches(self, output: str, key: object, expected: bool) -> None:
        assert output_matches(output, key) is expected


class TestForcing:
    def test_no_rules_never_forces(self) -> None:
        assert ToolRulesSolver([]).must_force_tool_call() is False

    def test_init_forces_only_before_first_call(self) -> None:
        solver = ToolRulesSolver([InitToolRule(tool_name="start")])
        assert solver.must_force_tool_call() is True
        solver.register_call("start")
        assert solver.must_force_tool_call() is False

    @pytest.mark.parametrize(
        "rule",
        [
            ChildToolRule(tool_name="start", children=["next"]),
            ConditionalToolRule(tool_name="start", child_output_mapping={"a": "next"}),
            ParentToolRule(tool_name="start", children=["next"]),
        ],
    )
    def test_constraining_rule_forces_after_its_tool(self, rule: ChildToolRule) -> None:
        solver = ToolRulesSolver([rule])
        assert solver.must_force_tool_call() is False
        solver.register_call("start")
        assert solver.must_force_tool_call() is True
        solver.register_call("next")
        assert solver.must_force_tool_call() is False

    @pytest.mark.parametrize(
        "rule",
        [
            MaxCountPerStepToolRule(tool_name="start", max_count_limit=1),
            TerminalToolRule(tool_name="start"),
            ContinueToolRule(tool_name="start"),
            RequiredBeforeExitToolRule(tool_name="start"),
            RequiresApprovalToolRule(tool_name="start"),
        ],
    )
    def test_flow_rules_do_not_force(self, rule: TerminalToolRule) -> None:
        solver = ToolRulesSolver([rule])
        solver.register_call("start")
        assert solver.must_force_tool_call() is False
