"""Tool rules: the wire models for Letta's nine rule types, discriminated by `type`.

The field names, defaults and `type` values are the contract with letta-client; the behaviour that the rules
drive lives in `memlet.tools.solver`. Every model forbids unknown fields, as Letta's do.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

_TOOL_NAME_DESCRIPTION = "The name of the tool. Must exist in the database for the user's organization."
_IGNORED_TEMPLATE = "Optional template string (ignored)."
_ARGS_DESCRIPTION = (
    "Optional prefilled arguments for this tool. When present, these values will override any LLM-provided "
    "arguments with the same keys during invocation. Keys must match the tool's parameter names and values "
    "must satisfy the tool's JSON schema. Supports partial prefill; non-overlapping parameters are left to the "
    "model."
)


class _ToolRuleBase(BaseModel):
    """The field every rule carries. Each subclass declares `type` and then `prompt_template`, which keeps
    Letta's field order (tool_name, type, prompt_template) in dumps and in the OpenAPI schema."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(..., description=_TOOL_NAME_DESCRIPTION)


def _template_field() -> Any:
    """`prompt_template` is accepted and stored, but rule prompts are always rendered by memlet itself."""
    return Field(default=None, description=_IGNORED_TEMPLATE)


class ToolCallNode(BaseModel):
    """A child of a ChildToolRule together with arguments to prefill when that child is called next."""

    name: str = Field(..., description="The name of the child tool to invoke next.")
    args: dict[str, Any] | None = Field(default=None, description=_ARGS_DESCRIPTION)


class InitToolRule(_ToolRuleBase):
    """The first tool call of a request must be one of the tools named by these rules."""

    type: Literal["run_first"] = "run_first"
    prompt_template: str | None = _template_field()
    args: dict[str, Any] | None = Field(default=None, description=_ARGS_DESCRIPTION)


class TerminalToolRule(_ToolRuleBase):
    """Calling this tool ends the agent loop."""

    type: Literal["exit_loop"] = "exit_loop"
    prompt_template: str | None = _template_field()


class ContinueToolRule(_ToolRuleBase):
    """Calling this tool keeps the agent loop going."""

    type: Literal["continue_loop"] = "continue_loop"
    prompt_template: str | None = _template_field()


class ChildToolRule(_ToolRuleBase):
    """Right after this tool, only `children` may be called."""

    type: Literal["constrain_child_tools"] = "constrain_child_tools"
    prompt_template: str | None = _template_field()
    children: list[str] = Field(..., description="The children tools that can be invoked.")
    child_arg_nodes: list[ToolCallNode] | None = Field(
        default=None,
        description="Optional list of typed child argument overrides. Each node must reference a child in 'children'.",
    )

    @model_validator(mode="after")
    def _nodes_name_children(self) -> "ChildToolRule":
        for node in self.child_arg_nodes or []:
            if node.name not in self.children:
                raise ValueError(
                    f"ChildToolRule child_arg_nodes contains a node for '{node.name}' "
                    f"which is not in children {self.children}."
                )
        return self

    def child_args(self) -> dict[str, dict[str, Any]]:
        """Map each child name to its prefilled arguments (children without args are left out)."""
        return {node.name: dict(node.args) for node in self.child_arg_nodes or [] if node.args}


class ConditionalToolRule(_ToolRuleBase):
    """After this tool, its output picks the single child that may be called next."""

    type: Literal["conditional"] = "conditional"
    prompt_template: str | None = _template_field()
    default_child: str | None = Field(
        default=None, description="The default child tool to be called. If None, any tool can be called."
    )
    # Keys are strings on the wire; Python callers may also use bool/int/float keys, which match typed outputs.
    child_output_mapping: dict[Any, str] = Field(..., description="The output case to check for mapping")
    require_output_mapping: bool = Field(
        default=False, description="Whether to throw an error when output doesn't match any case"
    )

    @field_validator("child_output_mapping")
    @classmethod
    def _mapping_not_empty(cls, value: dict[Any, str]) -> dict[Any, str]:
        if not value:
            raise ValueError("Conditional tool rule must have at least one child tool.")
        return value


class MaxCountPerStepToolRule(_ToolRuleBase):
    """The tool may be called at most `max_count_limit` times within one request."""

    type: Literal["max_count_per_step"] = "max_count_per_step"
    prompt_template: str | None = _template_field()
    max_count_limit: int = Field(
        ...,
        description="The max limit for the total number of times this tool can be invoked in a single step.",
    )


class ParentToolRule(_ToolRuleBase):
    """`children` may only be called immediately after this tool."""

    type: Literal["parent_last_tool"] = "parent_last_tool"
    prompt_template: str | None = _template_field()
    children: list[str] = Field(..., description="The children tools that can be invoked.")


class RequiredBeforeExitToolRule(_ToolRuleBase):
    """The agent may not end its turn before this tool has been called in the request."""

    type: Literal["required_before_exit"] = "required_before_exit"
    prompt_template: str | None = _template_field()


class RequiresApprovalToolRule(_ToolRuleBase):
    """Calls to this tool wait for a human approval instead of running."""

    type: Literal["requires_approval"] = "requires_approval"
    prompt_template: str | None = _template_field()


ToolRule = Annotated[
    ChildToolRule
    | InitToolRule
    | TerminalToolRule
    | ConditionalToolRule
    | ContinueToolRule
    | RequiredBeforeExitToolRule
    | MaxCountPerStepToolRule
    | ParentToolRule
    | RequiresApprovalToolRule,
    Field(discriminator="type"),
]

_TOOL_RULES_ADAPTER: TypeAdapter[list[ToolRule]] = TypeAdapter(list[ToolRule])


def parse_tool_rules(data: list[dict[str, Any]]) -> list[ToolRule]:
    """Validate raw JSON rule dicts (from a request body or a DB column) into typed rules."""
    return _TOOL_RULES_ADAPTER.validate_python(data)


def dump_tool_rules(rules: list[ToolRule]) -> list[dict[str, Any]]:
    """Serialize rules to JSON-ready dicts, the inverse of `parse_tool_rules`."""
    dumped: list[dict[str, Any]] = _TOOL_RULES_ADAPTER.dump_python(rules, mode="json")
    return dumped


def _rule_key(rule: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two stored rules the same rule, as Letta compares them: the tool and the type, plus the children
    (in any order) of a child or parent rule, the limit of a max-count rule, and the default child, the output
    mapping and `require_output_mapping` of a conditional rule. `prompt_template` never counts."""
    key: tuple[Any, ...] = (rule.get("tool_name"), rule.get("type"))
    kind = rule.get("type")
    if kind in ("constrain_child_tools", "parent_last_tool"):
        return (*key, tuple(sorted(rule.get("children") or [])))
    if kind == "max_count_per_step":
        return (*key, rule.get("max_count_limit"))
    if kind == "conditional":
        mapping = sorted((str(k), str(v)) for k, v in (rule.get("child_output_mapping") or {}).items())
        return (*key, rule.get("default_child"), tuple(mapping), rule.get("require_output_mapping"))
    return key


def unique_rules(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules without repeats (`_rule_key`), each kept where it first appears, as Letta stores them."""
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rule in rules:
        unique.setdefault(_rule_key(rule), rule)
    return list(unique.values())
