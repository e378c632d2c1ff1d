"""The agent's compiled system message: build its text from the agent row and blocks, and store it in place.

The system message is always `agent.message_ids[0]`; rewriting it keeps the same message id (Letta does the same),
so clients that cached the id still find it.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.loop import state as loop_state
from memlet.loop.system_prompt import PromptBlock, compile_system_prompt, uses_line_numbers
from memlet.loop.tool_rules import ToolRulesSolver
from memlet.tools.rules import parse_tool_rules


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
    section = ToolRulesSolver(parse_tool_rules(list(tool_rules))).render_rules_prompt()  # type: ignore[arg-type]
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
) -> str:
    """Compile the system message text for `agent` (pure).

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
    )


async def refresh_system_message(
    session: AsyncSession, agent: orm.Agent, *, update_timestamp: bool, with_rules: bool = False
) -> str:
    """Recompile the agent's system message and write it into `agent.message_ids[0]`; returns the text.

    Blocks come in attachment order; the recall count is every stored message of the agent minus the in-context
    ones. Archival memory is not stored yet, so it reports none. The "last recompiled" time moves only when
    `update_timestamp` is set (or was never set). Runs in the caller's transaction and never commits.
    """
    repo = loop_state.LoopRepository(session)
    blocks = await repo.blocks_of(agent.id)
    total = await repo.count_messages(agent.id)
    recall_count = max(total - len(agent.message_ids or []), 0)
    if update_timestamp or agent.system_compiled_at is None:
        agent.system_compiled_at = datetime.now(UTC)
    text = system_message_text(
        agent,
        blocks,
        recall_count=recall_count,
        archival_count=0,
        archival_tags=[],
        now=agent.system_compiled_at,
        with_rules=with_rules,
    )
    if agent.message_ids:
        await repo.set_message_content(agent.message_ids[0], [{"type": "text", "text": text}])
    return text
