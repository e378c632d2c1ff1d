"""Keep the prompt inside the context window: summarize the oldest part of the buffer, else drop it.

Called before every LLM call. When the prompt (system + buffer + pending input + tools) leaves too little of the
window for the completion (`headroom.prompt_budget`), the buffer is cut at a message that does not start with a
tool return (so a tool call is never separated from its result), the evicted part is summarized by the agent's
model, and the plan says which rows stay. Evicted rows stay in the database (recall memory); only `message_ids`
shrinks. If summarizing fails, or the summary does not fit, the oldest rows are simply dropped. The summarizer's
own request is clipped to fit the window too.
"""

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memlet.errors import LLMError
from memlet.llm.chat_format import prompt_tokens, to_openai_messages
from memlet.llm.client import LLMClient
from memlet.llm.tokens import count_tokens
from memlet.llm.types import ChatRequest
from memlet.loop.headroom import byte_bound, counting_margin
from memlet.messages.packing import format_local_time
from memlet.prompt.prompts import SUMMARIZER_INSTRUCTIONS

log = logging.getLogger(__name__)

GOAL_FRACTION = 0.7  # aim well below the window so compaction does not run again on the next step
SUMMARY_MAX_TOKENS = 512


class ContextOverflowError(Exception):
    """Even with an empty buffer the prompt does not fit the window."""


@dataclass
class CompactionPlan:
    """Rows to keep (oldest first), the summary text (None when rows were only dropped) and how many went."""

    kept: list[Any]
    summary: str | None
    evicted_count: int
    tokens_before: int


def _cut_points(rows: Sequence[Any]) -> list[int]:
    # A cut at i keeps rows[i:]; never start the kept part with a tool return, never cut off the last row.
    return [i for i in range(1, len(rows)) if rows[i].role != "tool"] or []


def _tokens(
    system: str,
    rows: Sequence[Any],
    pending: Sequence[Any],
    tools: list[dict[str, Any]],
    agent_type: str,
    summary: str | None,
) -> int:
    messages = to_openai_messages(system, [*rows, *pending], agent_type)
    if summary is not None:
        messages.insert(1, {"role": "user", "content": summary})
    return prompt_tokens(messages, tools)


def _transcript(rows: Sequence[Any], agent_type: str) -> str:
    lines = []
    for message in to_openai_messages("", rows, agent_type)[1:]:
        content = message.get("content") or ""
        text = content if isinstance(content, str) else " ".join(p.get("text", "[image]") for p in content)
        for call in message.get("tool_calls") or []:
            text += f" [called {call['function']['name']}({call['function']['arguments']})]"
        lines.append(f"{message['role']}: {text}")
    return "\n".join(lines)


async def _summarize(llm: LLMClient, model: str, transcript: str, window: int) -> str:
    max_tokens = min(SUMMARY_MAX_TOKENS, max(window // 8, 32))
    budget = window - count_tokens(SUMMARIZER_INSTRUCTIONS) - max_tokens - counting_margin(window) - 64
    if budget <= 0:
        raise ContextOverflowError("no room to summarize")
    while transcript and count_tokens(transcript) > budget:
        # Keep the most recent part of the evicted history; it matters most to what follows.
        transcript = transcript[len(transcript) // 4 :]
    request = ChatRequest(
        model=model,
        messages=[
            {"role": "system", "content": SUMMARIZER_INSTRUCTIONS},
            {"role": "user", "content": transcript},
        ],
        max_tokens=max_tokens,
        stream=False,
    )
    result = await llm.chat(request)
    if not result.content:
        raise ContextOverflowError("empty summary")
    return result.content.strip()


def summary_text(summary: str, evicted: int, stats: dict[str, Any], timezone: str | None) -> str:
    """The stored summary message: a packed system alert carrying Letta's compaction stats."""
    message = (
        f"Note: {evicted} messages from the beginning of the conversation have been hidden from view due to "
        f"memory constraints.\nThe following is a summary of the previous messages:\n {summary}"
    )
    return json.dumps(
        {"type": "system_alert", "message": message, "time": format_local_time(timezone), "compaction_stats": stats}
    )


async def plan_compaction(
    *,
    llm: LLMClient,
    model: str,
    system: str,
    rows: Sequence[Any],
    pending: Sequence[Any],
    tools: list[dict[str, Any]],
    agent_type: str,
    window: int,
    limit: int | None = None,
) -> CompactionPlan | None:
    """None when the prompt already fits; otherwise which rows to keep and the summary of the rest.

    The prompt fits when it is at most `limit` tokens (default: the window). The loop passes
    `headroom.prompt_budget`, which leaves room in the window for the completion.
    """
    limit = window if limit is None else limit
    messages = to_openai_messages(system, [*rows, *pending], agent_type)
    if byte_bound(messages, tools) <= limit:
        return None  # fits for sure: skip the exact count, the costliest part of a short step
    before = prompt_tokens(messages, tools)
    if before <= limit:
        return None
    if _tokens(system, [], pending, tools, agent_type, None) > limit:
        raise ContextOverflowError("the system prompt, tools and new input alone exceed the context window")
    goal = min(int(window * GOAL_FRACTION), limit)
    points = [*_cut_points(rows), len(rows)]
    cut = next((i for i in points if _tokens(system, rows[i:], pending, tools, agent_type, None) <= goal), len(rows))
    summary: str | None = None
    try:
        summary = await _summarize(llm, model, _transcript(rows[:cut], agent_type), window)
    except (LLMError, ContextOverflowError) as exc:
        log.warning("summarization failed, dropping the oldest messages instead: %s", exc)
    placeholder = summary_text(summary, cut, {}, None) if summary else None
    # The summary takes room too: move the cut forward (then drop the summary) until everything fits.
    for i in [p for p in points if p >= cut]:
        if _tokens(system, rows[i:], pending, tools, agent_type, placeholder) <= limit:
            return CompactionPlan(kept=list(rows[i:]), summary=summary, evicted_count=i, tokens_before=before)
    return CompactionPlan(kept=[], summary=None, evicted_count=len(rows), tokens_before=before)
