"""The agent's compiled system message: build its text from the agent row and blocks, and store it in place.

The system message is always `agent.message_ids[0]`; rewriting it keeps the same message id (Letta does the same),
so clients that cached the id still find it.
"""

import copy
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.files import line_view
from memlet.files.agent_files import file_limits
from memlet.files.agent_repository import FileAgentRepository
from memlet.folders.repository import FolderRepository
from memlet.llm.client import wire_tool_call_id
from memlet.loop import state as loop_state
from memlet.loop.directories import PromptFile, PromptFolder, render_directories
from memlet.loop.system_prompt import PromptBlock, compile_system_prompt, uses_line_numbers
from memlet.loop.tokens import count_message_tokens, count_tools_tokens
from memlet.loop.tool_rules import ToolRulesSolver
from memlet.passages.repository import PassageRepository
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
    directories: str = "",
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
        directories=directories,
    )


async def directories_text(session: AsyncSession, agent: orm.Agent) -> str:
    """The agent's `<directories>` section: its folders and the file blocks of their files ("" without any)."""
    folders = await FolderRepository(session).of_agent(agent.id)
    if not folders:
        return ""
    max_open, char_limit = file_limits(agent)
    files = [
        PromptFile(
            r.source_id, r.file_name, line_view.truncate_view(r.visible_content, r.is_open, char_limit), char_limit
        )
        for r in await FileAgentRepository(session).of_agent(agent.id)
    ]
    shown = [PromptFolder(f.id, f.name, f.description, f.instructions) for f in folders]
    return render_directories(shown, files, max_open)


async def refresh_system_message(
    session: AsyncSession, agent: orm.Agent, *, update_timestamp: bool, with_rules: bool = False
) -> str:
    """Recompile the agent's system message and write it into `agent.message_ids[0]`; returns the text.

    Blocks come in attachment order; the recall count is every stored message of the agent minus the in-context
    ones; the archival lines count the passages (and list the tags) of every archive attached to the agent. The "last recompiled" time moves only when
    `update_timestamp` is set (or was never set). Runs in the caller's transaction and never commits.
    """
    repo = loop_state.LoopRepository(session)
    blocks = await repo.blocks_of(agent.id)
    total = await repo.count_messages(agent.id)
    recall_count = max(total - len(agent.message_ids or []), 0)
    archival_count, archival_tags = await PassageRepository(session).agent_count_and_tags(
        agent.organization_id, agent.id
    )
    if update_timestamp or agent.system_compiled_at is None:
        agent.system_compiled_at = datetime.now(UTC)
    text = system_message_text(
        agent,
        blocks,
        recall_count=recall_count,
        archival_count=archival_count,
        archival_tags=archival_tags,
        now=agent.system_compiled_at,
        with_rules=with_rules,
        directories=await directories_text(session, agent),
    )
    if agent.message_ids:
        await repo.set_message_content(agent.id, agent.message_ids[0], [{"type": "text", "text": text}])
    return text


# --- the LLM request: stored messages and tools in OpenAI's chat format -------------------------------------

# Agent types whose every reply is a tool call carrying `thinking` and (non-terminal tools) `request_heartbeat`.
V2_AGENT_TYPES = frozenset({"memgpt_agent", "memgpt_v2_agent", "react_agent", "workflow_agent", "split_thread_agent"})
THINKING_PARAM = "thinking"
HEARTBEAT_PARAM = "request_heartbeat"
_THINKING_SCHEMA = {"type": "string", "description": "Deep inner monologue private to you only."}
_HEARTBEAT_SCHEMA = {
    "type": "boolean",
    "description": "Request an immediate heartbeat after function execution. "
    "Set to `true` if you want to chain another function call after this one.",
}


def is_v2(agent_type: str) -> bool:
    """Whether the agent runs the always-call-a-tool loop (memgpt-style) rather than letta_v1's."""
    return agent_type in V2_AGENT_TYPES


def _text_parts(content: list[dict[str, Any]] | None) -> str:
    return "".join(str(part.get("text", "")) for part in content or [] if part.get("type") == "text")


def _wire_calls(calls: list[dict[str, Any]], thinking: str | None) -> list[dict[str, Any]]:
    wired = []
    for call in calls:
        function = dict(call.get("function") or {})
        if thinking is not None:
            # V2 models were asked for their thoughts as the first argument; give them back the same way.
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = None
            if isinstance(args, dict):
                function["arguments"] = json.dumps({THINKING_PARAM: thinking, **args}, ensure_ascii=False)
        wired.append({"id": wire_tool_call_id(call["id"]), "type": "function", "function": function})
    return wired


def to_openai_messages(system_text: str, rows: Sequence[orm.Message], agent_type: str) -> list[dict[str, Any]]:
    """The chat messages for the LLM: the system prompt, then the in-context buffer (rows after the system row)."""
    v2 = is_v2(agent_type)
    out: list[dict[str, Any]] = [{"role": "system", "content": system_text}]
    for row in rows:
        text = _text_parts(row.content)
        if row.role in ("assistant", "approval"):
            if not row.tool_calls:
                if row.role == "assistant" and text:
                    out.append({"role": "assistant", "content": text})
                continue  # approval responses are represented by the tool rows that follow them
            thinking = text if v2 else None
            content = None if v2 or not text else text
            calls = _wire_calls(row.tool_calls, thinking)
            last = out[-1]
            if row.role == "approval" and last["role"] == "assistant" and last.get("tool_calls"):
                # A mixed response was stored as an assistant row plus an approval row; the model made it as
                # one message, and the tool returns that follow answer both rows' calls.
                last["tool_calls"] = [*last["tool_calls"], *calls]
                continue
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif row.role == "tool":
            out.append({"role": "tool", "tool_call_id": wire_tool_call_id(row.tool_call_id or ""), "content": text})
        elif row.role in ("user", "summary"):
            out.append({"role": "user", "content": text})
        elif row.role == "system":
            out.append({"role": "system", "content": text})
    return out


def tool_definition(schema: dict[str, Any], *, v2: bool, terminal: bool) -> dict[str, Any]:
    """An OpenAI tool object for a stored json_schema; V2 agents get `thinking` and `request_heartbeat`."""
    function = copy.deepcopy(schema)
    if v2:
        params = function.setdefault("parameters", {"type": "object", "properties": {}})
        properties = {THINKING_PARAM: _THINKING_SCHEMA, **params.get("properties", {})}
        required = [THINKING_PARAM, *[r for r in params.get("required", []) if r != THINKING_PARAM]]
        if not terminal:
            properties[HEARTBEAT_PARAM] = _HEARTBEAT_SCHEMA
            required.append(HEARTBEAT_PARAM)
        params["properties"], params["required"] = properties, required
    return {"type": "function", "function": function}


def prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Our estimate of a request's prompt size, compared against the context window."""
    return count_message_tokens(messages) + count_tools_tokens(tools)
