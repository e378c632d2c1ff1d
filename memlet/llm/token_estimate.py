"""Letta 0.16.8's approximate token counts, for every model but Claude and Gemini (`provider_counted`).

Letta estimated those models' tokens as UTF-8 bytes / 4, rounded up, of a text, of the messages' JSON and of the
tools' JSON (as it dumped them); after a compaction it added a 30% margin to each of the two counts. For Claude
and Gemini it asked the provider's own token-counting API; memlet makes no such call and counts them with
cl100k_base (`memlet.llm.tokens`).
"""

import json
from collections.abc import Mapping
from typing import Any

# Letta counted these endpoints' tokens with the provider's own API (Anthropic's count_tokens, Gemini's countTokens).
_PROVIDER_COUNTED = frozenset({"anthropic", "google_ai", "google_vertex"})
_BYTES_PER_TOKEN = 4
# Letta's margin on its estimate of the context left after a compaction.
COMPACTION_MARGIN = 1.3


def provider_counted(config: Mapping[str, Any]) -> bool:
    """Whether Letta asked the provider to count this config's tokens (memlet counts them locally)."""
    return config.get("model_endpoint_type") in _PROVIDER_COUNTED


def letta_estimate(text: str) -> int:
    """Letta's approximate count: UTF-8 bytes / 4, rounded up."""
    return -(-len(text.encode("utf-8", "surrogatepass")) // _BYTES_PER_TOKEN)


def messages_estimate(messages: list[dict[str, Any]]) -> int:
    """The messages' JSON, as Python's json.dumps writes it (ASCII only, spaces after separators), estimated."""
    return letta_estimate(json.dumps(messages, default=str)) if messages else 0


def tools_estimate(tools: list[dict[str, Any]]) -> int:
    """The tools' JSON as Letta dumped each one: an OpenAI function tool whose function lists `name`,
    `description`, `parameters` and `strict` (null when unset) before any other key."""
    dumped = []
    for tool in tools:
        function = tool.get("function") or {}
        head = {key: function.get(key) for key in ("name", "description", "parameters", "strict")}
        dumped.append({"function": {**head, **function}, "type": "function"})
    return letta_estimate(json.dumps(dumped)) if dumped else 0


def compacted_estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Letta's count of the context a compaction left: the messages' and the tools' estimates, each with its
    margin, truncated."""
    return int(messages_estimate(messages) * COMPACTION_MARGIN) + int(tools_estimate(tools) * COMPACTION_MARGIN)
