"""LM Studio's prompt tokens when its stream reports none: Letta counts the prompt it sent instead.

Letta reads an `lmstudio_openai` model's token stream with a fallback: when the stream's usage gives no prompt
tokens, the prompt's messages and tool definitions are counted (cl100k_base) and the usage shows that count, so a
run on a server that leaves usage out of its stream still shows what its prompts cost. memlet streams from the
provider for every call, so the count stands in wherever the answer reported no prompt tokens.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from memlet.llm.tokens import count_message_tokens, count_tools_tokens
from memlet.llm.types import ChatRequest, ChatResult

COUNTED_PROVIDERS = frozenset({"lmstudio_openai"})


def with_counted_prompt(result: ChatResult, request: ChatRequest, llm_config: Mapping[str, Any]) -> ChatResult:
    """`result` with its prompt tokens counted from `request` when an LM Studio model reported none."""
    usage = result.usage
    if usage.prompt_tokens or llm_config.get("provider_name") not in COUNTED_PROVIDERS:
        return result
    functions = [t.get("function", t) for t in request.tools or ()]
    prompt = count_message_tokens(request.messages) + count_tools_tokens(functions)
    counted = replace(usage, prompt_tokens=prompt, total_tokens=prompt + usage.completion_tokens)
    return replace(result, usage=counted)
