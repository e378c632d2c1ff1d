"""The agent's system message text, compiled from the agent row and its blocks (pure: no database)."""

from collections.abc import Sequence
from datetime import datetime

from memlet.db import models as orm
from memlet.prompt.system_prompt import PromptBlock, compile_system_prompt, uses_line_numbers
from memlet.tools.rules import parse_tool_rules
from memlet.tools.solver import ToolRulesSolver


def prompt_blocks(blocks: Sequence[orm.Block]) -> list[PromptBlock]:
    """The prompt's view of ORM blocks, in the given (attachment) order."""
    return [
        PromptBlock(label=b.label, value=b.value, limit=b.limit, description=b.description, read_only=b.read_only)
        for b in blocks
    ]


def tool_rules_text(tool_rules: list[dict[str, object]] | None) -> str:
    """The `<tool_rule>` elements for the agent's rules ("" when none say anything).

    The solver renders a whole section; the compiler adds its own wrapper, so only the rule elements are kept.
    """
    if not tool_rules:
        return ""
    section = ToolRulesSolver(parse_tool_rules(list(tool_rules))).render_rules_prompt()
    start, end = section.find("<tool_rule>"), section.rfind("</tool_rule>")
    if start == -1 or end == -1:
        return ""
    return section[start : end + len("</tool_rule>")]


def system_message_text(
    agent: orm.Agent,
    blocks: Sequence[orm.Block],
    *,
    recall_count: int,
    archival_count: int,
    archival_tags: Sequence[str],
    now: datetime,
    with_rules: bool = False,
    conversation_id: str | None = None,
) -> str:
    """Compile the system message text for `agent` (pure); `conversation_id` names a conversation's own prompt.

    `with_rules=False` matches Letta at agent creation: no tool-rule section and no line numbers. The loop passes
    True when it rebuilds the prompt after memory edits or compaction.
    """
    endpoint = (agent.llm_config or {}).get("model_endpoint_type")
    return compile_system_prompt(
        base=agent.system or "",
        blocks=prompt_blocks(blocks),
        agent_id=agent.id,
        agent_type=agent.agent_type,
        timezone=agent.timezone,
        recompiled_at=now,
        recall_count=recall_count,
        archival_count=archival_count,
        archival_tags=archival_tags,
        tool_rules_text=tool_rules_text(agent.tool_rules) if with_rules else "",
        line_numbers=with_rules and uses_line_numbers(agent.agent_type, endpoint),
        **({"conversation_id": conversation_id} if conversation_id else {}),
    )
