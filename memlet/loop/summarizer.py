"""The summarizer: an agent's `compaction_settings`, the transcript of the evicted rows, and the summary call.

`compaction_settings` (stored on the agent, or given to `/summarize`) choose the mode (`sliding_window` keeps the
newest turns, `all` summarizes every complete turn), how much a sliding window evicts
(`sliding_window_percentage`), the summarizer's model (a handle; the agent's own model when unset), its
instructions (`prompt`) and the longest summary kept (`clip_chars`). A failed or empty summary raises: the caller
then leaves the context as it was, never drops rows without a summary.
"""

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from memlet.errors import BadRequestError
from memlet.llm.chat_format import to_openai_messages
from memlet.llm.client import LLMClient
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.tokens import count_tokens
from memlet.llm.types import ChatRequest
from memlet.loop.headroom import counting_margin
from memlet.messages.packing import format_local_time
from memlet.prompt.prompts import SUMMARIZER_INSTRUCTIONS

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 512
TRUNCATION_SUFFIX = "... [summary truncated to fit]"
SYSTEM_PROMPT_OVERFLOW = (
    "Compaction failed because the system prompt is too large for this model's context window. Reduce system "
    "instructions, memory blocks, or tools, or use a model with a larger context window."
)


class ContextOverflowError(BadRequestError):
    """Even with an empty buffer the prompt does not fit the window (stop reason
    `context_window_overflow_in_system_prompt`, a 400 as in Letta)."""

    def __init__(self, tokens: int, window: int) -> None:
        super().__init__(
            f"{SYSTEM_PROMPT_OVERFLOW} (the system prompt, tools and new input take {tokens} tokens; "
            f"the context window is {window})"
        )


class CompactionFailedError(BadRequestError):
    """Compaction could not bring the prompt inside the window (the current turn alone is too large)."""


@dataclass(frozen=True)
class SummarizerSettings:
    """The `compaction_settings` fields memlet honours (self_compact_* modes run as their plain counterparts)."""

    mode: str = "sliding_window"
    sliding_window_percentage: float = 0.3
    model: str | None = None
    clip_chars: int | None = 50_000
    prompt: str | None = None

    @classmethod
    def from_stored(cls, *layers: dict[str, Any] | None) -> Self:
        """Merge stored settings, later layers winning (agent's settings, then a request's)."""
        merged: dict[str, Any] = {}
        for layer in layers:
            merged.update({k: v for k, v in (layer or {}).items() if v is not None or k == "clip_chars"})
        mode = str(merged.get("mode") or "sliding_window")
        pct = float(merged.get("sliding_window_percentage") or 0.3)
        return cls(
            mode="all" if mode.endswith("all") else "sliding_window",
            sliding_window_percentage=min(max(pct, 0.0), 1.0),
            model=merged.get("model") or None,
            clip_chars=merged.get("clip_chars", 50_000),
            prompt=merged.get("prompt") or None,
        )


def summarizer_llm_config(agent_config: dict[str, Any], handle: str | None) -> dict[str, Any]:
    """The llm_config for the summary call: the agent's, with the model of `handle` when it names another model
    of the same provider (a handle of another provider falls back to the agent's model, as Letta falls back)."""
    if not handle or handle == agent_config.get("handle") or "/" not in handle:
        return agent_config
    provider, model = handle.split("/", 1)
    own = str(agent_config.get("handle") or "")
    if own and own.split("/", 1)[0] != provider:
        log.warning("summarizer model %s is not served by the agent's provider; using the agent's model", handle)
        return agent_config
    return {**agent_config, "model": model, "handle": handle}


def summary_max_tokens(window: int) -> int:
    """The completion limit of a summary call (a summary never takes more of the window than this)."""
    return min(SUMMARY_MAX_TOKENS, max(window // 8, 32))


def transcript(rows: Sequence[Any], agent_type: str) -> str:
    """The evicted rows as plain `role: text` lines, tool calls included."""
    lines = []
    for message in to_openai_messages("", rows, agent_type)[1:]:
        content = message.get("content") or ""
        text = content if isinstance(content, str) else " ".join(p.get("text", "[image]") for p in content)
        for call in message.get("tool_calls") or []:
            text += f" [called {call['function']['name']}({call['function']['arguments']})]"
        lines.append(f"{message['role']}: {text}")
    return "\n".join(lines)


async def summarize(llm: LLMClient, model: str, settings: SummarizerSettings, text: str, window: int) -> str:
    """One summary call with the settings' instructions; the answer clipped to `clip_chars`.

    Raises what the LLM call raises, and LLMEmptyResponseError for an empty answer.
    """
    instructions = settings.prompt or SUMMARIZER_INSTRUCTIONS
    max_tokens = summary_max_tokens(window)
    budget = window - count_tokens(instructions) - max_tokens - counting_margin(window) - 64
    if budget <= 0:
        raise CompactionFailedError("The summarizer's instructions leave no room in the context window.")
    while text and count_tokens(text) > budget:
        # The summarizer's own request must fit too: keep the most recent part of the evicted history.
        text = text[len(text) // 4 :]
    request = ChatRequest(
        model=model,
        messages=[{"role": "system", "content": instructions}, {"role": "user", "content": text}],
        max_tokens=max_tokens,
        stream=False,
    )
    result = await llm.chat(request)
    summary = (result.content or "").strip()
    if not summary:
        raise LLMEmptyResponseError("the summarizer returned an empty summary")
    if settings.clip_chars is not None and len(summary) > settings.clip_chars:
        summary = summary[: settings.clip_chars] + TRUNCATION_SUFFIX
    return summary


def summary_text(summary: str, evicted: int, stats: dict[str, Any], timezone: str | None) -> str:
    """The stored summary message: a packed system alert carrying Letta's compaction stats."""
    message = (
        f"Note: {evicted} messages from the beginning of the conversation have been hidden from view due to "
        f"memory constraints.\nThe following is a summary of the previous messages:\n {summary}"
    )
    return json.dumps(
        {"type": "system_alert", "message": message, "time": format_local_time(timezone), "compaction_stats": stats}
    )
