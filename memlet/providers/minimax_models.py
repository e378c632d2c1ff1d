"""MiniMax's models, as Letta lists them: MiniMax has no listing endpoint, so a fixed list of its M2 models, each
with a 200,000 token window and 128,000 output tokens, reached through MiniMax's Anthropic-compatible API."""

from typing import Any

from memlet.providers import anthropic_models
from memlet.providers.schemas import LLMConfig

MINIMAX_URL = "https://api.minimax.io/anthropic"
CONTEXT_WINDOW = 200_000
MAX_OUTPUT_TOKENS = 128_000
MODELS = ("MiniMax-M2.1", "MiniMax-M2.1-lightning", "MiniMax-M2", "MiniMax-M2.5", "MiniMax-M2.7")


def key_check(base_url: str, api_key: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The request Letta checks a MiniMax key with: the URL, headers and body of a token count for one short user
    message on the newest model (`/v1/messages/count_tokens` under the base URL, as turns reach `/v1/messages`)."""
    url = f"{base_url.rstrip('/').removesuffix('/v1')}/v1/messages/count_tokens"
    body = {"model": MODELS[-1], "messages": [{"role": "user", "content": "a"}]}
    return url, anthropic_models.headers(api_key), body


def llm_configs(name: str, category: str, base_url: str | None) -> list[dict[str, Any]]:
    """The LLMConfig wire dicts a MiniMax provider named `name` lists (in Letta's order)."""
    return [
        LLMConfig(
            model=model,
            model_endpoint_type="minimax",
            model_endpoint=base_url or MINIMAX_URL,
            context_window=CONTEXT_WINDOW,
            handle=f"{name}/{model}",
            max_tokens=MAX_OUTPUT_TOKENS,
            put_inner_thoughts_in_kwargs=True,
            parallel_tool_calls=True,
            provider_name=name,
            provider_category=category,
        ).model_dump(mode="json")
        for model in MODELS
    ]
