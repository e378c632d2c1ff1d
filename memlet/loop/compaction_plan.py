"""Which rows a compaction evicts, and the summary that replaces them.

Cuts fall only at turn boundaries: the kept part starts with the input that opened a turn (a user or system
message of a run other than the row before it), so a tool call is never parted from its return and a turn is
never half summarized. The end of the buffer is a boundary too once the turn is complete.

`sliding_window` (Letta's default) evicts at least `sliding_window_percentage` + 10% of the rows, 10% more at a
time, until the rest fits in (1 - percentage) of the window and in the prompt budget; when no boundary gets
there it falls back to `all`. `all` evicts every complete turn. The summary is checked against the budget
afterwards; a sliding window that does not fit with its summary is redone as `all`.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memlet.llm.chat_format import prompt_tokens, request_messages, to_openai_messages
from memlet.llm.client import LLMClient
from memlet.llm.openai_http import encode_json
from memlet.llm.token_estimate import compacted_estimate
from memlet.llm.tokens import count_tools_tokens
from memlet.loop.buffer_chat import BufferChat, Wire, converted
from memlet.loop.headroom import byte_bound
from memlet.loop.summarizer import (
    CompactionFailedError,
    ContextOverflowError,
    SummarizerSettings,
    summarize,
    summary_max_tokens,
    summary_text,
    transcript,
)

TRIGGER_FRACTION = 0.9  # Letta compacts after a step whose total_tokens pass 90% of the window


@dataclass
class CompactionPlan:
    """Rows to keep (oldest first), the summary text and how many rows went."""

    kept: list[Any]
    summary: str
    evicted_count: int
    tokens_before: int
    tokens_after: int
    mode: str


@dataclass
class Prompt:
    """What a request carries besides the buffer, for counting; `chat` shares the step's conversion of its
    buffer with the request (`scrub_thoughts`: converted as the request converts it, `thoughts_scrubbed`)."""

    system: str
    pending: Sequence[Any]
    tools: list[dict[str, Any]]
    agent_type: str
    chat: BufferChat | None = None
    scrub_thoughts: bool = False

    def messages(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return request_messages(self.system, self._converted(rows))

    def _converted(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return converted(self.chat, [*rows, *self.pending], self.agent_type, scrub_thoughts=self.scrub_thoughts)

    def tokens(self, rows: Sequence[Any], summary: str | None = None) -> int:
        """The prompt's tokens: the system prompt, the summary when given, the rows and the pending input."""
        head = [{"role": "system", "content": self.system}]
        if summary is not None:
            head.append({"role": "user", "content": summary})
        if self.chat is None:
            return prompt_tokens([*head, *self._converted(rows)], self.tools)
        # The messages' counts kept with the conversion: only new ones are counted.
        return self._wire(self.chat, rows).tokens(*head) + count_tools_tokens(self.tools)

    def letta_estimate(self, kept: Sequence[Any]) -> int:
        """Letta's count of what a compaction left (its `context_tokens_after`): the system prompt, the kept rows
        and the pending input as OpenAI messages, and the tools, by its byte estimate with its margin. As in Letta,
        the summary is not among them."""
        messages = to_openai_messages(self.system, [*kept, *self.pending], self.agent_type)
        return compacted_estimate(messages, self.tools)

    def _wire(self, chat: BufferChat, rows: Sequence[Any]) -> Wire:
        return chat.wire([*rows, *self.pending], self.agent_type, scrub_thoughts=self.scrub_thoughts)

    def surely_under(self, rows: Sequence[Any], limit: int) -> bool:
        if self.chat is None:
            return byte_bound(self.messages(rows), self.tools) <= limit
        # The size from each message's JSON, kept with the conversion (the step's request reuses it).
        wire = self._wire(self.chat, rows)
        size = wire.json_length(encode_json({"role": "system", "content": self.system}))
        return byte_bound([], self.tools, messages_size=size) <= limit


def trigger_threshold(window: int) -> int:
    return int(window * TRIGGER_FRACTION)


def turn_starts(rows: Sequence[Any]) -> list[int]:
    """Indexes (>= 1) where a turn begins: an input row whose run differs from the row before it."""
    starts = []
    for i in range(1, len(rows)):
        row, before = rows[i], rows[i - 1]
        if row.role in ("user", "system") and (row.run_id is None or row.run_id != before.run_id):
            starts.append(i)
    return starts


def turn_complete(rows: Sequence[Any]) -> bool:
    """The buffer does not end inside a turn: no call waits for its return (an approval, a client tool)."""
    return not rows or not (rows[-1].role == "assistant" and rows[-1].tool_calls)


def cut_points(rows: Sequence[Any], complete: bool) -> list[int]:
    return [*turn_starts(rows), *([len(rows)] if complete and rows else [])]


def choose_cut(n: int, cuts: list[int], settings: SummarizerSettings, fits: Callable[[int], bool]) -> int:
    """The sliding window's cut (the first boundary at or before a growing share of the rows that fits), or the
    last boundary (mode `all`, or no boundary fits)."""
    if settings.mode == "sliding_window":
        share = settings.sliding_window_percentage
        while share < 1.0:
            share += 0.1
            before = [c for c in cuts if c <= round(share * n)]
            if before and fits(before[-1]):
                return before[-1]
    return cuts[-1]


Summarize = Callable[[str], Awaitable[str]]  # the evicted transcript -> its summary (raises when it fails)


def summarizer(
    llm: LLMClient, config: Mapping[str, Any], settings: SummarizerSettings, window: int, user: str | None = None
) -> Summarize:
    """Summaries from `llm` (the model of `config`) with the settings' prompt, model settings and clipping;
    `user`: the requesting user's id, sent as a step's request sends it."""

    async def run(text: str) -> str:
        return await summarize(llm, config, settings, text, window, user)

    return run


async def plan_compaction(
    *,
    summarize_with: Summarize,
    settings: SummarizerSettings,
    prompt: Prompt,
    rows: Sequence[Any],
    window: int,
    limit: int,
    complete: bool,
    force: bool = False,
) -> CompactionPlan | None:
    """None when nothing needs doing (the prompt fits and `force` is off) or no boundary can be cut; otherwise
    the rows to keep and the summary of the rest.

    Raises ContextOverflowError when the system prompt, tools and new input alone exceed `limit`,
    CompactionFailedError when even `all` does not fit, and what the summary call raises.
    """
    if not force and prompt.surely_under(rows, limit):
        return None
    before = prompt.tokens(rows)
    if not force and before <= limit:
        return None
    fixed = prompt.tokens([])
    if fixed > limit:
        raise ContextOverflowError(fixed, window)
    cuts = cut_points(rows, complete)
    if not cuts:
        if before <= limit:
            return None
        raise CompactionFailedError("The current turn alone does not fit in the context window.")
    # Room for the summary that will open the kept rows: its completion limit and the alert around it.
    goal = (
        min(int(window * (1 - settings.sliding_window_percentage)), limit)
        - summary_max_tokens(window, settings.max_tokens)
        - 64
    )
    cut = choose_cut(len(rows), cuts, settings, lambda i: prompt.tokens(rows[i:]) <= goal)
    mode = "all" if cut == cuts[-1] else settings.mode
    summary = await summarize_with(transcript(rows[:cut], prompt.agent_type))
    after = prompt.tokens(rows[cut:], summary_text(summary, mode, None, None))
    if after > limit and cut != cuts[-1]:
        cut, mode = cuts[-1], "all"
        summary = await summarize_with(transcript(rows[:cut], prompt.agent_type))
        after = prompt.tokens(rows[cut:], summary_text(summary, mode, None, None))
    if after > limit:
        raise CompactionFailedError(
            f"Compaction left {after} tokens, more than the {limit} this context window allows; the current "
            "turn alone is too large."
        )
    return CompactionPlan(list(rows[cut:]), summary, cut, before, after, mode)
