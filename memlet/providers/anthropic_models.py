"""Anthropic's model listing (`GET /v1/models`, paginated), as Letta lists it: Claude chat models only, a 200,000
token window (the API does not say), Letta's default output limits, and no embedding models."""

from typing import Any

from memlet.net.fetch import Fetcher
from memlet.providers.known_models import handle_name
from memlet.providers.schemas import LLMConfig

ANTHROPIC_URL = "https://api.anthropic.com/v1"
ANTHROPIC_VERSION = "2023-06-01"
CONTEXT_WINDOW = 200_000
_MAX_PAGES = 20


def headers(api_key: str | None) -> dict[str, str]:
    """Anthropic authenticates with `x-api-key` (not a bearer token) and wants an API version."""
    out = {"anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        out["x-api-key"] = api_key
    return out


def max_output_tokens(model: str) -> int:
    """Letta's default `max_tokens` for a Claude model."""
    if "claude-opus-4-6" in model or "claude-sonnet-4-6" in model:
        return 21_000
    if "opus" in model or "sonnet" in model:
        return 16_384
    return 8192


async def list_model_ids(fetcher: Fetcher, base_url: str, api_key: str | None) -> list[str]:
    """Every model id the endpoint lists, following `has_more` / `last_id`."""
    ids: list[str] = []
    params: dict[str, Any] = {"limit": 1000}
    for _ in range(_MAX_PAGES):
        response = await fetcher.request("GET", f"{base_url}/models", headers=headers(api_key), params=params)
        response.raise_for_status()
        body = response.json()
        data = body.get("data") if isinstance(body, dict) else None
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and entry.get("type", "model") == "model" and isinstance(entry.get("id"), str):
                ids.append(entry["id"])
        if not (isinstance(body, dict) and body.get("has_more") and body.get("last_id")):
            break
        params = {"limit": 1000, "after_id": body["last_id"]}
    return [i for i in ids if not i.startswith("claude-2")]


def llm_config(name: str, category: str, base_url: str, model: str) -> dict[str, Any]:
    """The LLMConfig wire dict listed for one Claude model (under Letta's short handle for a few)."""
    return LLMConfig(
        model=model,
        model_endpoint_type="anthropic",
        model_endpoint=base_url,
        context_window=CONTEXT_WINDOW,
        handle=f"{name}/{handle_name(name, model)}",
        put_inner_thoughts_in_kwargs=True,
        max_tokens=max_output_tokens(model),
        provider_name=name,
        provider_category=category,
    ).model_dump(mode="json")
