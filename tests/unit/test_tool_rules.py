"""The tool-rule wire models: parsing by discriminator, validation and dumping."""

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
