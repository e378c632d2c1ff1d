"""Compile the stored system message and split it back into the sections the context overview reports.

The layout is Letta's, byte for byte (clients and the ADE parse it):

    {base prompt}\\n\\n<memory_blocks>...</memory_blocks>[\\n\\n<tool_usage_rules>...</tool_usage_rules>]
    \\n\\n<memory_metadata>...</memory_metadata>

A base prompt may place the memory anywhere with a `{CORE_MEMORY}` placeholder; without one the memory goes at
the end.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memlet.messages.packing import clock_zone

CORE_MEMORY_PLACEHOLDER = "{CORE_MEMORY}"
DEFAULT_CONVERSATION_ID = "default"
TIMESTAMP_FORMAT = "%Y-%m-%d %I:%M:%S %p %Z%z"

# Letta numbers block lines only for Anthropic models on these agent types.
LINE_NUMBERED_AGENT_TYPES = frozenset({"letta_v1_agent", "memgpt_v2_agent", "sleeptime_agent"})
# These agent types carry no core memory in their prompt.
AGENT_TYPES_WITHOUT_BLOCKS = frozenset({"react_agent", "workflow_agent"})

_BLOCKS_INTRO = "The following memory blocks are currently engaged in your core memory unit:"
_LINE_NUMBER_WARNING = (
    "# NOTE: The numbers and arrows at the start of each line (like '1→') only help you locate text. "
    "Never include them in the text you pass to a memory editing tool."
)
_TOOL_RULES_INTRO = (
    "Follow these constraints when you call tools; a call that breaks them will not run as intended. "
    "One response may contain several tool calls."
)
_SECTION_TAGS = ("memory_blocks", "memory_filesystem", "tool_usage_rules", "directories", "memory_metadata")


@dataclass(frozen=True)
class PromptBlock:
    """One memory block as the system prompt shows it."""

    label: str
    value: str
    limit: int | None
    description: str | None = None
    read_only: bool = False


def uses_line_numbers(agent_type: str, model_endpoint_type: str | None) -> bool:
    """Whether block values are rendered with line numbers for this agent type and model provider."""
    return model_endpoint_type == "anthropic" and agent_type in LINE_NUMBERED_AGENT_TYPES


def format_timestamp(moment: datetime, timezone: str | None) -> str:
    """Format `moment` in the agent's timezone the way the memory metadata shows it.

    Names are matched in any letter case, as Letta's are; unknown or missing ones fall back to UTC. Naive datetimes
    are taken as UTC.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(clock_zone(timezone) or UTC).strftime(TIMESTAMP_FORMAT)


def _render_value(value: str, line_numbers: bool) -> str:
    if not line_numbers:
        return f"{value}\n"
    if not value:
        return ""
    return "".join(f"{number}→ {line}\n" for number, line in enumerate(value.split("\n"), start=1))


def _render_block(block: PromptBlock, line_numbers: bool) -> str:
    metadata = "- read_only=true\n" if block.read_only else ""
    metadata += f"- chars_current={len(block.value)}\n- chars_limit={block.limit or 0}\n"
    warning = f"<warning>\n{_LINE_NUMBER_WARNING}\n</warning>\n" if line_numbers else ""
    return (
        f"<{block.label}>\n"
        f"<description>\n{block.description or ''}\n</description>\n"
        f"<metadata>\n{metadata}</metadata>\n"
        f"{warning}"
        f"<value>\n{_render_value(block.value, line_numbers)}</value>\n"
        f"</{block.label}>\n"
    )


def render_memory_blocks(blocks: Sequence[PromptBlock], *, line_numbers: bool = False) -> str:
    """Render the `<memory_blocks>` section, or "" when there are no blocks (the line-numbered variant keeps its
    empty wrapper, as Letta's does)."""
    if not blocks and not line_numbers:
        return ""
    body = "\n".join(_render_block(block, line_numbers) for block in blocks)
    return f"<memory_blocks>\n{_BLOCKS_INTRO}\n\n{body}\n</memory_blocks>"


def render_tool_usage_rules(rules_text: str) -> str:
    """Render the `<tool_usage_rules>` section (with its leading blank line), or "" when there are no rules."""
    if not rules_text:
        return ""
    return f"\n\n<tool_usage_rules>\n{_TOOL_RULES_INTRO}\n\n{rules_text}\n</tool_usage_rules>"


def render_memory_metadata(
    *,
    agent_id: str,
    timezone: str | None,
    recompiled_at: datetime,
    recall_count: int,
    archival_count: int,
    archival_tags: Sequence[str],
    conversation_id: str = DEFAULT_CONVERSATION_ID,
) -> str:
    """Render the `<memory_metadata>` section; archival lines appear only when there is something to report."""
    lines = [
        "<memory_metadata>",
        f"- AGENT_ID: {agent_id}",
        f"- CONVERSATION_ID: {conversation_id}",
        f"- System prompt last recompiled: {format_timestamp(recompiled_at, timezone)}",
        f"- {recall_count} previous messages between you and the user are stored in recall memory",
    ]
    if archival_count > 0:
        lines.append(
            f"- {archival_count} total memories you created are stored in archival memory (use tools to access them)"
        )
    if archival_tags:
        lines.append(f"- Available archival memory tags: {', '.join(archival_tags)}")
    lines.append("</memory_metadata>")
    return "\n".join(lines)


def compile_system_prompt(
    *,
    base: str,
    blocks: Sequence[PromptBlock],
    agent_id: str,
    agent_type: str,
    timezone: str | None,
    recompiled_at: datetime,
    recall_count: int,
    archival_count: int,
    archival_tags: Sequence[str],
    tool_rules_text: str = "",
    line_numbers: bool = False,
    conversation_id: str = DEFAULT_CONVERSATION_ID,
    directories: str = "",
) -> str:
    """Build the full system message text: base prompt, memory blocks, tool rules and memory metadata.

    `tool_rules_text` is the already rendered `<tool_rule>` list (empty for none); `directories` the rendered
    `<directories>` section (`memlet.prompt.directories`, empty without folders). `line_numbers` should come
    from `uses_line_numbers`; Letta leaves it off when it first compiles a new agent's prompt.
    """
    memory = ""
    if agent_type not in AGENT_TYPES_WITHOUT_BLOCKS:
        memory = render_memory_blocks(blocks, line_numbers=line_numbers)
    memory += render_tool_usage_rules(tool_rules_text) + directories
    metadata = render_memory_metadata(
        agent_id=agent_id,
        conversation_id=conversation_id,
        timezone=timezone,
        recompiled_at=recompiled_at,
        recall_count=recall_count,
        archival_count=archival_count,
        archival_tags=archival_tags,
    )
    if CORE_MEMORY_PLACEHOLDER not in base:
        base = f"{base}\n\n{CORE_MEMORY_PLACEHOLDER}"
    return base.replace(CORE_MEMORY_PLACEHOLDER, f"{memory}\n\n{metadata}")


def _find_element(text: str, tag: str, start: int = 0) -> tuple[int, int] | None:
    """Span of the first `<tag>...</tag>` at or after `start`, closing tag included."""
    opening = text.find(f"<{tag}>", start)
    if opening == -1:
        return None
    closing = text.find(f"</{tag}>", opening)
    if closing == -1:
        return None
    return opening, closing + len(tag) + 3


def _find_top_level(text: str, tag: str, blocks_span: tuple[int, int] | None) -> tuple[int, int] | None:
    """Like `_find_element`, but skips matches inside `<memory_blocks>` (a block may be labelled like a section)."""
    start = 0
    while (span := _find_element(text, tag, start)) is not None:
        if blocks_span is None or not blocks_span[0] < span[0] < blocks_span[1]:
            return span
        start = span[0] + 1
    return None


def _base_prompt(prompt: str, first_section: int) -> str | None:
    head = prompt[:first_section]
    tagged = _find_element(head, "base_instructions")
    if tagged is not None:
        return head[tagged[0] : tagged[1]]
    return head.strip() or None


def split_sections(prompt: str) -> dict[str, str | None]:
    """Split a compiled system message into the parts `GET /v1/agents/{id}/context` reports.

    Keys: system_prompt (the `<base_instructions>` element, else the text before the first section), core_memory,
    memory_filesystem, tool_usage_rules, directories, external_memory_summary. Missing parts are None.
    """
    blocks_span = _find_element(prompt, "memory_blocks")
    spans: dict[str, tuple[int, int] | None] = {"memory_blocks": blocks_span}
    for tag in _SECTION_TAGS[1:]:
        spans[tag] = _find_top_level(prompt, tag, blocks_span)
    starts = [span[0] for span in spans.values() if span is not None]

    def text_of(tag: str) -> str | None:
        span = spans[tag]
        return prompt[span[0] : span[1]] if span else None

    return {
        "system_prompt": _base_prompt(prompt, min(starts, default=len(prompt))),
        "core_memory": text_of("memory_blocks"),
        "memory_filesystem": text_of("memory_filesystem"),
        "tool_usage_rules": text_of("tool_usage_rules"),
        "directories": text_of("directories"),
        "external_memory_summary": text_of("memory_metadata"),
    }
