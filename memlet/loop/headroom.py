"""Room for the reply: how much of the context window a prompt may fill, and the `max_tokens` a request may ask for.

A provider rejects a request whose prompt plus completion limit exceeds the model's window (vLLM, llama.cpp and
OpenAI all do), and it counts the prompt with its own tokenizer and chat template, which never matches our
cl100k_base count exactly. So compaction keeps the prompt (by our count) under the window minus a reserve for the
completion and a margin for counting differences, and each request's `max_tokens` is lowered, when it has to be,
to what is left of the window.
"""

from collections.abc import Callable
from typing import Any

from memlet.llm.openai_http import encode_json
from memlet.llm.tokens import count_message_tokens, count_tools_tokens

DEFAULT_CONTEXT_WINDOW = 128000  # an llm_config without a context_window
# The reply is promised at most a quarter of the window: a configured max_tokens larger than that (16384 on a
# 4096-token local model) would otherwise leave no room for any prompt.
COMPLETION_SHARE_DIVISOR = 4
# 5% of the window absorbs how differently a provider counts the same prompt (tool schemas rendered with other
# separators, chat-template markers).
COUNTING_MARGIN_DIVISOR = 20


def completion_reserve(window: int, max_tokens: int | None) -> int:
    """Tokens kept free for the completion: the configured limit, at most a quarter of the window."""
    quarter = window // COMPLETION_SHARE_DIVISOR
    return quarter if max_tokens is None or max_tokens <= 0 else min(max_tokens, quarter)


def counting_margin(window: int) -> int:
    """Tokens kept free because a provider may count the prompt higher than we do."""
    return window // COUNTING_MARGIN_DIVISOR


def prompt_budget(window: int, max_tokens: int | None) -> int:
    """The largest prompt (by our count) a request may carry and still leave room for its completion."""
    return window - completion_reserve(window, max_tokens) - counting_margin(window)


def byte_bound(messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, messages_size: int | None = None) -> int:
    """An upper bound of the prompt's tokens: every token stands for at least one byte, and the JSON text of a
    message outweighs the per-message framing the exact count adds. `messages_size`: the length of the messages'
    compact JSON array when the caller knows it (`BufferChat.wire`), so they are not encoded again."""
    if messages_size is None:
        return len(encode_json([messages, tools])) + 8  # compact UTF-8 JSON, as the request's own body
    return messages_size + len(encode_json(tools)) + 3 + 8  # `[` messages `,` tools `]`


def completion_limit(
    window: int,
    max_tokens: int | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    messages_size: int | None = None,
    messages_tokens: Callable[[], int] | None = None,
) -> int | None:
    """The `max_tokens` to send: the configured one, lowered so that prompt + completion fit in the window.

    None stays None (the provider then stops at the end of the window by itself). Never below 1: a prompt that
    leaves no room at all is compaction's to fix, and the provider's answer then says so. `messages_tokens`:
    `count_message_tokens(messages)` from counts the caller keeps (`Wire.tokens`), called only when needed.
    """
    if max_tokens is None:
        return None
    margin = counting_margin(window)
    if byte_bound(messages, tools, messages_size=messages_size) + max_tokens + margin <= window:
        return max_tokens  # fits for sure: skip the exact count on the common, short prompt
    counted = messages_tokens() if messages_tokens is not None else count_message_tokens(messages)
    used = counted + count_tools_tokens(tools)
    return max(1, min(max_tokens, window - used - margin))
