"""Facts about well-known models that providers' `/models` answers leave out: context windows, output limits.

Numbers are the vendors' published limits (as Letta 0.16.8 reports them); a model missing from the table falls
back to what its provider says about it, then to Letta's default of 30,000 tokens.
"""

import re
from collections.abc import Mapping
from typing import Any

from memlet.llm.model_quirks import is_zai_reasoner

# Letta's fallback when nothing is known about a model.
DEFAULT_CONTEXT_WINDOW = 30_000
# Letta caps a resolved model's window at this unless the agent asks for `context_window_limit`.
GLOBAL_MAX_CONTEXT_WINDOW = 128_000
# Used when a BYOK provider's model has no known window at all (Letta's DEFAULT_CONTEXT_WINDOW constant).
BYOK_DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT_TOKENS = 4096
OPENAI_MAX_OUTPUT_TOKENS = 16_384
EMBEDDING_CHUNK_SIZE = 300
# Letta's hosted endpoint behind `letta/letta-free` (chat and embeddings).
LETTA_ENDPOINT = "https://inference.letta.com/v1/"

_CONTEXT_WINDOWS: dict[str, int] = {
    # OpenAI chat models
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-16k": 16_385,
    "gpt-4": 8192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4-turbo-preview": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o-latest": 128_000,
    "gpt-4.5-preview": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-5": 272_000,
    "gpt-5-mini": 272_000,
    "gpt-5-nano": 272_000,
    "gpt-5-codex": 272_000,
    "gpt-5.1": 272_000,
    "gpt-5.1-codex": 272_000,
    "gpt-5.2": 272_000,
    "gpt-5.4": 1_050_000,
    "gpt-5.4-mini": 400_000,
    "gpt-5.4-nano": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    # OpenAI embedding models (they appear in an OpenAI-compatible server's /models list)
    "text-embedding-ada-002": 8191,
    "text-embedding-3-small": 8191,
    "text-embedding-3-large": 8191,
    # Other vendors commonly reached through OpenAI-compatible endpoints
    "deepseek-chat": 64_000,
    "deepseek-reasoner": 64_000,
    "glm-4.5": 128_000,
    "glm-4.6": 180_000,
    "glm-4.7": 180_000,
    "glm-5": 180_000,
    "kimi-k2-thinking": 256_000,
    "kimi-k2.5": 262_144,
    "claude-3-5-haiku-latest": 200_000,
    "claude-3-7-sonnet-latest": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-opus-4-5": 200_000,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
}
# A dated snapshot ("gpt-4o-2024-08-06", "o3-mini-2025-01-31") has its base model's window.
# Letta 0.16.8 lists these models of the providers named `anthropic` and `openai` (api.openai.com only) under a
# shorter handle; the config's `model` stays the provider's id.
_SHORT_HANDLES: dict[str, dict[str, str]] = {
    "anthropic": {
        "claude-3-5-haiku-20241022": "claude-3-5-haiku",
        "claude-haiku-4-5-20251001": "claude-haiku-4-5",
        "claude-3-5-sonnet-20241022": "claude-3-5-sonnet",
        "claude-3-opus-20240229": "claude-3-opus",
    },
    "openai": {
        "chatgpt-4o-latest": "chatgpt-4o",
        "gpt-3.5-turbo-0125": "gpt-3.5-turbo-jan",
        "gpt-3.5-turbo-1106": "gpt-3.5-turbo-nov",
        "gpt-4-0125-preview": "gpt-4-preview-jan",
        "gpt-4-0613": "gpt-4-june",
        "gpt-4-1106-preview": "gpt-4-preview-nov",
        "gpt-4-turbo-2024-04-09": "gpt-4-turbo-apr",
        "gpt-4o-2024-05-13": "gpt-4o-may",
        "gpt-4o-2024-08-06": "gpt-4o-aug",
        "gpt-4o-mini-2024-07-18": "gpt-4o-mini-jul",
    },
}


def handle_name(provider_name: str, model: str) -> str:
    """The model part of the handle a model of the named provider is listed under."""
    return _SHORT_HANDLES.get(provider_name, {}).get(model, model)


_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")
# Keys an OpenAI-compatible server may use to state a model's window (OpenRouter, vLLM, LM Studio, Together...).
_PROVIDER_WINDOW_KEYS = ("context_length", "context_window", "max_context_length", "max_model_len", "max_input_tokens")

# OpenAI's fixed embedding catalogue: Letta lists these three and never asks the provider's /models.
OPENAI_EMBEDDING_DIMS: dict[str, int] = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}


def known_context_window(model: str) -> int | None:
    """The published window of `model` (or of the model a dated snapshot belongs to), if the table knows it."""
    name = model.rsplit("/", 1)[-1].lower()
    if name in _CONTEXT_WINDOWS:
        return _CONTEXT_WINDOWS[name]
    base = _DATE_SUFFIX.sub("", name)
    return _CONTEXT_WINDOWS.get(base)


def provider_context_window(entry: Mapping[str, Any]) -> int | None:
    """The window a provider's `/models` entry states about itself, if any."""
    for key in _PROVIDER_WINDOW_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def context_window_for(
    model: str, entry: Mapping[str, Any] | None = None, *, default: int = DEFAULT_CONTEXT_WINDOW
) -> int:
    """The context window to list for `model`: the table, then the provider's own answer, then `default`."""
    return known_context_window(model) or (provider_context_window(entry) if entry else None) or default


def openai_max_output_tokens(model: str) -> int:
    """Letta's default `max_tokens` for a model served by an OpenAI-style provider."""
    if re.match(r"^gpt-5\.[234]", model) and "-chat" not in model:
        return 128_000
    return OPENAI_MAX_OUTPUT_TOKENS


def is_openai_reasoning_model(model: str) -> bool:
    """OpenAI's native reasoners (o-series and gpt-5), whose reasoning cannot be switched off."""
    return model.startswith(("o1", "o3", "o4", "gpt-5"))


def _supports_none_effort(model: str) -> bool:
    return model.startswith(("gpt-5.1", "gpt-5.2", "gpt-5.3", "gpt-5.4"))


def _default_openai_effort(model: str) -> str:
    if _supports_none_effort(model):
        return "none"
    # Codex models reject "minimal".
    return "minimal" if model.startswith("gpt-5") and "codex" not in model.lower() else "medium"


def _is_anthropic_reasoner(kind: str, model: str) -> bool:
    return kind in ("anthropic", "bedrock") and model.startswith(
        ("claude-3-7-sonnet", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4-5")
    )


def _is_gemini_reasoner(kind: str, model: str) -> bool:
    return kind in ("google_ai", "google_vertex") and model.startswith(("gemini-2.5-flash", "gemini-2.5-pro"))


def _is_zai_reasoner(kind: str, model: str) -> bool:
    return kind in ("zai", "zai_coding") and is_zai_reasoner(model)


# OpenRouter model ids carry the vendor ("openai/o3-mini"), so reasoners are recognized by substrings.
_OPENROUTER_REASONER_HINTS = (
    "/o1",
    "/o3",
    "/o4",
    "/gpt-5",
    "claude-3-7-sonnet",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "gemini",
    "glm-4.5",
    "glm-4.6",
    "glm-4.7",
    "glm-5",
    "deepseek-r1",
    "deepseek-reasoner",
    "kimi",
)


def _is_openrouter_reasoner(kind: str, model: str) -> bool:
    name = model.lower()
    return kind == "openrouter" and any(hint in name for hint in _OPENROUTER_REASONER_HINTS)


def _anthropic_defaults(cfg: dict[str, Any], model: str) -> None:
    adaptive = model.startswith(("claude-opus-4-6", "claude-sonnet-4-6"))
    if cfg.get("enable_reasoner") and not cfg.get("max_reasoning_tokens") and not adaptive:
        cfg["max_reasoning_tokens"] = 1024
    if model.startswith(("claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-6")) and cfg.get("effort") is None:
        cfg["effort"] = "medium"


def _openai_reasoner_defaults(cfg: dict[str, Any], model: str) -> None:
    cfg["put_inner_thoughts_in_kwargs"] = False
    cfg["enable_reasoner"] = True
    if cfg.get("reasoning_effort") is None:
        cfg["reasoning_effort"] = _default_openai_effort(model)
    if model.startswith("gpt-5") and cfg.get("verbosity") is None:
        cfg["verbosity"] = "medium"


def _apply_v1_policy(cfg: dict[str, Any], reasoning: bool) -> None:
    """letta_v1_agent: native reasoners only; no inner thoughts simulated through tool kwargs."""
    kind, model = cfg.get("model_endpoint_type") or "", cfg["model"]
    if kind == "openai" and is_openai_reasoning_model(model):
        _openai_reasoner_defaults(cfg, model)
        return
    configurable_gemini = _is_gemini_reasoner(kind, model) and not model.startswith("gemini-2.5-pro")
    toggles = _is_zai_reasoner(kind, model) or _is_openrouter_reasoner(kind, model) or kind == "baseten"
    if _is_anthropic_reasoner(kind, model) or configurable_gemini or toggles:
        cfg["enable_reasoner"] = reasoning
        cfg["put_inner_thoughts_in_kwargs"] = False
        if not toggles:
            _anthropic_defaults(cfg, model)
        return
    if model.startswith(("gemini-2.5-pro", "gemini-3")):
        cfg |= {"put_inner_thoughts_in_kwargs": False, "enable_reasoner": True}
        cfg["max_reasoning_tokens"] = cfg.get("max_reasoning_tokens") or 1024
        return
    cfg |= {"put_inner_thoughts_in_kwargs": False, "enable_reasoner": False, "max_reasoning_tokens": 0}


def _apply_classic_policy(cfg: dict[str, Any], reasoning: bool) -> None:
    """Other agent types: reasoning off turns everything off; on, non-native models think in tool kwargs."""
    kind, model = cfg.get("model_endpoint_type") or "", cfg["model"]
    openai_reasoner = kind == "openai" and is_openai_reasoning_model(model)
    if not reasoning:
        if openai_reasoner:
            _openai_reasoner_defaults(cfg, model)
            if _supports_none_effort(model):
                cfg["reasoning_effort"] = "none"
        elif model.startswith(("gemini-2.5-pro", "gemini-3")):
            cfg |= {"put_inner_thoughts_in_kwargs": True, "enable_reasoner": True}
            cfg["max_reasoning_tokens"] = cfg.get("max_reasoning_tokens") or 1024
        else:
            cfg |= {"put_inner_thoughts_in_kwargs": False, "enable_reasoner": False}
        return
    cfg["enable_reasoner"] = True
    if _is_anthropic_reasoner(kind, model):
        cfg["put_inner_thoughts_in_kwargs"] = False
        _anthropic_defaults(cfg, model)
    elif _is_gemini_reasoner(kind, model):
        cfg["put_inner_thoughts_in_kwargs"] = True
        cfg["max_reasoning_tokens"] = cfg.get("max_reasoning_tokens") or 1024
    elif _is_zai_reasoner(kind, model) or _is_openrouter_reasoner(kind, model):
        cfg["put_inner_thoughts_in_kwargs"] = False
    elif openai_reasoner:
        _openai_reasoner_defaults(cfg, model)
    else:
        cfg["put_inner_thoughts_in_kwargs"] = True


def apply_reasoning(config: Mapping[str, Any], reasoning: bool, agent_type: str | None) -> dict[str, Any]:
    """`config` with its reasoning flags set for the requested `reasoning` and agent type, as Letta does."""
    cfg = dict(config)
    if agent_type == "letta_v1_agent":
        _apply_v1_policy(cfg, reasoning)
    else:
        _apply_classic_policy(cfg, reasoning)
    return cfg


def normalize_llm_config(config: Mapping[str, Any], *, default_endpoint: str | None) -> dict[str, Any]:
    """A client-given legacy llm_config with the model-specific defaults Letta fills in when they are absent.

    A missing `model_endpoint` becomes `default_endpoint` (the endpoint type's usual URL), so the agent can be
    run; the handle is left as given (Letta computes none for a raw config).
    """
    cfg = dict(config)
    model = cfg.get("model") or ""
    kind = cfg.get("model_endpoint_type") or ""
    if cfg.get("max_tokens") is None:
        if re.match(r"^gpt-5\.[23]", model) and "-chat" not in model:
            cfg["max_tokens"] = 128_000
        elif model.startswith("gpt-5"):
            cfg["max_tokens"] = OPENAI_MAX_OUTPUT_TOKENS
        elif model == "gpt-4.1":
            cfg["max_tokens"] = 8192
    if cfg.get("context_window") is None:
        # Letta's raw-config defaults differ from its listing for gpt-4.1 (256k, not 1M).
        cfg["context_window"] = 256_000 if model == "gpt-4.1" else known_context_window(model) or DEFAULT_CONTEXT_WINDOW
    if model.startswith("gpt-5") and cfg.get("verbosity") is None:
        cfg["verbosity"] = "medium"
    if is_openai_reasoning_model(model) or _is_anthropic_reasoner(kind, model):
        cfg["put_inner_thoughts_in_kwargs"] = False
    if not cfg.get("model_endpoint"):
        cfg["model_endpoint"] = default_endpoint
    return cfg
