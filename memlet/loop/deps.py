"""What the loop needs from the app (`LoopDeps`) and what one request asks of it (`RunOptions`)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.llm.client import LLMClient, client_for


@dataclass
class LoopDeps:
    """What the loop needs from the app: a sessionmaker, settings, and an LLM client per llm_config."""

    sessionmaker: async_sessionmaker[AsyncSession]
    settings: Settings
    llm_for: Callable[[dict[str, Any]], LLMClient]


@dataclass
class RunOptions:
    """Per-request knobs.

    `override_model` is the raw handle from the request; the loop cannot resolve handles (the model catalog
    lives on the app), so it is only recorded. The HTTP layer honours it by resolving the handle and passing
    the resulting llm_config fields as `llm_config_override`: they replace the agent's llm_config fields for
    this request only (model, endpoint, context window...) and are never written back to the agent.
    """

    max_steps: int = 50
    stream_tokens: bool = False
    override_model: str | None = None
    llm_config_override: dict[str, Any] | None = None
    client_tools: list[dict[str, Any]] = field(default_factory=list)
    run_metadata: dict[str, Any] | None = None
    request_config: dict[str, Any] | None = None
    background: bool = False


def default_llm_for(settings: Settings) -> Callable[[dict[str, Any]], LLMClient]:
    """The production factory: endpoint URL from llm_config, key from settings (none for local servers).

    Clients are kept per (endpoint type, URL, key) so requests reuse their HTTP connections; a client holds no
    state of the agent or the request.
    """
    cache: dict[tuple[str, str, str | None], LLMClient] = {}

    def build(llm_config: dict[str, Any]) -> LLMClient:
        endpoint_type = str(llm_config.get("model_endpoint_type") or "openai")
        keys = {"openai": settings.openai_api_key, "deepseek": settings.deepseek_api_key}
        secret = keys.get(endpoint_type)
        base_url = llm_config.get("model_endpoint") or (
            settings.openai_base_url if endpoint_type == "openai" else "https://api.deepseek.com/v1"
        )
        key = secret.get_secret_value() if secret else None
        cache_key = (endpoint_type, str(base_url), key)
        if cache_key not in cache:
            cache[cache_key] = client_for(
                endpoint_type, str(base_url), key, settings.llm_timeout_s, settings.llm_max_retries
            )
        return cache[cache_key]

    return build
