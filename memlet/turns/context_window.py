"""``GET /v1/agents/{agent_id}/context``: what the agent's next LLM call would hold, with token counts per part.

Sections come from the stored (compiled) system message, split where Letta splits it; tools are counted as the
loop sends them; messages are the in-context buffer after the system message.

Counts are Letta 0.16.8's estimate, UTF-8 bytes / 4 rounded up, of each section's text, of the messages' JSON and
of the tools' JSON (as Letta dumps them), for every model but Claude and Gemini. For those Letta asked the
provider's token-counting API on every report; memlet makes no such call and counts them with cl100k_base.
"""

from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.parts import ContextWindowOverview
from memlet.llm.chat_format import is_v2, text_parts, to_openai_messages
from memlet.llm.token_estimate import letta_estimate, messages_estimate, provider_counted, tools_estimate
from memlet.llm.tokens import count_message_tokens, count_tokens, count_tools_tokens
from memlet.llm.tool_definitions import tool_definition
from memlet.loop.agent_state import LoopRepository
from memlet.messages.schemas import StoredMessage
from memlet.passages.repository import PassageRepository
from memlet.prompt.system_prompt import split_sections
from memlet.tools.solver import ToolRulesSolver

DEFAULT_CONTEXT_WINDOW = 128_000
# Letta detects an in-context summary only as a user message right after the system message with this text (a
# summary stored with the `summary` role counts among the messages).
_SUMMARY_MARKER = "The following is a summary of the previous "


async def context_window(
    session: AsyncSession, org_id: str, agent_id: str, conversation_id: str | None = None
) -> ContextWindowOverview:
    """The context-window report for one agent (four queries: the agent with its blocks and tools, its buffer, its message and passage counts)."""
    repo = LoopRepository(session)
    state = await repo.load_state_or_404(agent_id, org_id, conversation_id)
    agent, rows = state.agent, state.messages
    system_text = text_parts(rows[0].content) if rows else ""
    sections = split_sections(system_text)
    terminal = set(ToolRulesSolver.from_stored(agent.tool_rules).terminal_tool_names())
    v2 = is_v2(agent.agent_type)
    tools = [
        tool_definition(t.json_schema or {"name": t.name}, v2=v2, terminal=t.name in terminal) for t in state.tools
    ]
    buffer = rows[1:]
    summary = None
    if buffer and buffer[0].role == "user" and _SUMMARY_MARKER in text_parts(buffer[0].content):
        summary = text_parts(buffer[0].content)
    # The messages after the system message, and after the summary, which has its own count (as Letta counts).
    chat = to_openai_messages(system_text, buffer[1:] if summary else buffer, agent.agent_type)[1:]

    # A prompt that opens with its memory (`{CORE_MEMORY}` first) has no text before the first section: Letta then
    # reports the agent's base prompt as it was written.
    system_prompt = sections["system_prompt"] or agent.system or ""

    tokenized = provider_counted(agent.llm_config or {})
    text_tokens: Callable[[str], int] = count_tokens if tokenized else letta_estimate

    def tokens(text: str | None) -> int:
        return text_tokens(text or "")

    counts = {
        "num_tokens_system": tokens(system_prompt),
        "num_tokens_core_memory": tokens(sections["core_memory"]),
        "num_tokens_external_memory_summary": tokens(sections["external_memory_summary"]),
        "num_tokens_memory_filesystem": tokens(sections["memory_filesystem"]),
        "num_tokens_tool_usage_rules": tokens(sections["tool_usage_rules"]),
        "num_tokens_directories": tokens(sections["directories"]),
        "num_tokens_summary_memory": tokens(summary),
        "num_tokens_functions_definitions": count_tools_tokens(tools) if tokenized else tools_estimate(tools),
        "num_tokens_messages": count_message_tokens(chat) if tokenized else messages_estimate(chat),
    }
    return ContextWindowOverview(
        context_window_size_max=int((agent.llm_config or {}).get("context_window") or DEFAULT_CONTEXT_WINDOW),
        context_window_size_current=sum(counts.values()),
        num_messages=len(rows),
        num_archival_memory=await PassageRepository(session).agent_count(org_id, agent_id),
        num_recall_memory=await repo.messages.count_for_agent(agent_id),
        external_memory_summary=sections["external_memory_summary"] or "",
        system_prompt=system_prompt,
        core_memory=sections["core_memory"] or "",
        memory_filesystem=sections["memory_filesystem"],
        tool_usage_rules=sections["tool_usage_rules"],
        directories=sections["directories"],
        summary_memory=summary,
        functions_definitions=tools,
        messages=[StoredMessage.model_validate(row) for row in rows],
        **counts,
    )
