"""ToolRulesSolver and the tool-rule wire models."""

from typing import Any

import pytest
from pydantic import ValidationError

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
    dump_tool_rules,
    parse_tool_rules,
)
from memlet.tools.solver import ToolRulesSolver, output_matches

TOOLS = ["start", "next", "helper", "final", "end"]


class TestWireModels:
    def test_parses_every_type_by_discriminator(self) -> None:
        raw: list[dict[str, Any]] = [
            {"tool_name": "a", "type": "run_first", "args": {"x": 1}},
            {"tool_name": "a", "type": "exit_loop"},
            {"tool_name": "a", "type": "continue_loop"},
            {"tool_name": "a", "type": "constrain_child_tools", "children": ["b"]},
            {"tool_name": "a", "type": "conditional", "child_output_mapping": {"yes": "b"}},
            {"tool_name": "a", "type": "max_count_per_step", "max_count_limit": 2},
            {"tool_name": "a", "type": "parent_last_tool", "children": ["b"]},
            {"tool_name": "a", "type": "required_before_exit"},
            {"tool_name": "a", "type": "requires_approval"},
        ]
        rules = parse_tool_rules(raw)
        assert [type(r) for r in rules] == [
            InitToolRule,
            TerminalToolRule,
            ContinueToolRule,
            ChildToolRule,
            ConditionalToolRule,
            MaxCountPerStepToolRule,
            ParentToolRule,
            RequiredBeforeExitToolRule,
            RequiresApprovalToolRule,
        ]

    def test_dump_has_letta_fields_and_defaults(self) -> None:
        rules = parse_tool_rules(
            [
                {"tool_name": "a", "type": "conditional", "child_output_mapping": {"yes": "b"}},
                {"tool_name": "c", "type": "constrain_child_tools", "children": ["d"]},
            ]
        )
        assert dump_tool_rules(rules) == [
            {
                "tool_name": "a",
                "type": "conditional",
                "prompt_template": None,
                "default_child": None,
                "child_output_mapping": {"yes": "b"},
                "require_output_mapping": False,
            },
            {
                "tool_name": "c",
                "type": "constrain_child_tools",
                "prompt_template": None,
                "children": ["d"],
                "child_arg_nodes": None,
            },
        ]
        assert list(dump_tool_rules(rules)[0])[:3] == ["tool_name", "type", "prompt_template"]

    def test_unknown_type_rejected(self) -> None:
        with pytest.raises(ValidationError):
            parse_tool_rules([{"tool_name": "a", "type": "nope"}])

    def test_extra_field_rejected(self) -> None:
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            parse_tool_rules([{"tool_name": "a", "type": "exit_loop", "children": []}])

    def test_empty_conditional_mapping_rejected(self) -> None:
        with pytest.raises(ValidationError, match=r"Conditional tool rule must have at least one child tool\."):
            ConditionalToolRule(tool_name="a", child_output_mapping={})

    def test_arg_node_must_name_a_child(self) -> None:
        with pytest.raises(ValidationError, match="which is not in children"):
            ChildToolRule(tool_name="a", children=["b"], child_arg_nodes=[ToolCallNode(name="c", args={})])


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
