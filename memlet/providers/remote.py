"""Asking a provider which models it serves: OpenAI-compatible `/models`, Ollama's `/api/tags`, Letta's fixed list.

Each listing becomes wire dicts (LLMConfig / EmbeddingConfig) under handles `provider_name/model`.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from memlet.crypto import Keyring
from memlet.db import models as orm
from memlet.errors import BadRequestError, LLMError
from memlet.llm.model_quirks import FAST_SUFFIX
from memlet.net.fetch import Fetcher, FetchError, StatusError, UnsendableRequestError
from memlet.net.outbound import OutboundPolicy
from memlet.providers import anthropic_models, minimax_models
from memlet.providers import known_models as km
from memlet.providers.schemas import EmbeddingConfig, LLMConfig

OPENAI_URL = "https://api.openai.com/v1"
# provider_type -> (model_endpoint_type Letta gives its chat models, default base URL) for OpenAI-style APIs.
OPENAI_STYLE: dict[str, tuple[str, str | None]] = {
    "openai": ("openai", OPENAI_URL),
    "deepseek": ("deepseek", "https://api.deepseek.com/v1"),
    "groq": ("groq", "https://api.groq.com/openai/v1"),
    "together": ("together", "https://api.together.xyz/v1"),
    "xai": ("xai", "https://api.x.ai/v1"),
    "openrouter": ("openrouter", "https://openrouter.ai/api/v1"),
    "zai": ("zai", "https://api.z.ai/api/paas/v4"),
    "zai_coding": ("zai_coding", "https://api.z.ai/api/coding/paas/v4"),
    "mistral": ("openai", "https://api.mistral.ai/v1"),
    "cerebras": ("openai", "https://api.cerebras.ai/v1"),
    "fireworks": ("openai", "https://api.fireworks.ai/inference/v1"),
    "baseten": ("baseten", "https://inference.baseten.co/v1"),
    "vllm": ("openai", None),
    "lmstudio_openai": ("openai", None),
    "sglang": ("openai", None),
    "hugging-face": ("openai", None),
    "moonshot": ("openai", "https://api.moonshot.ai/v1"),
}
# On api.openai.com itself Letta lists only chat models that can call tools through chat completions.
_OPENAI_PREFIXES = ("gpt-4", "gpt-5", "o1", "o3", "o4")
_OPENAI_EXCLUDED = ("transcribe", "search", "realtime", "tts", "audio", "computer", "o1-mini", "o1-preview", "o1-pro")
_OLLAMA_DEFAULT_WINDOW = 128_000
_FAST_VARIANT_MODELS = frozenset({"gpt-5.4"})  # listed twice by Letta: as is and with FAST_SUFFIX
# Letta's providers that are not OpenAI's subclasses keep its base default of 4,096 output tokens.
_PLAIN_PROVIDERS = frozenset({"vllm", "sglang", "mistral"})
_PLAIN_MAX_OUTPUT_TOKENS = 4096


@dataclass(frozen=True)
class ProviderSource:
    """Where to list a provider's models: its name (the handle prefix), type, category, URL and key.
    `handle_prefix` replaces the name in its chat models' handles (`openai-proxy`, `MEMLET_OPENAI_PROXY_HANDLES`)."""

    name: str
    provider_type: str
    category: str
    base_url: str | None
    api_key: str | None = None
    handle_prefix: str | None = None

    @classmethod
    def from_row(cls, row: orm.Provider, keyring: Keyring | None) -> "ProviderSource":
        """The row as a source; with a keyring its key is decrypted, with None it is left out (listing only)."""
        key = keyring.reveal(row.api_key, f"API key of provider {row.name!r}") if keyring else None
        return cls(row.name, row.provider_type, "byok", default_base_url(row.provider_type, row.base_url), key)


@dataclass
class ModelLists:
    llm: list[dict[str, Any]] = field(default_factory=list)
    embedding: list[dict[str, Any]] = field(default_factory=list)


def normalize_base_url(url: str) -> str:
    """`url` without a trailing slash, with `/v1` added when it names only a host (`http://host:port`)."""
    url = url.rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


def default_base_url(provider_type: str, base_url: str | None) -> str | None:
    """The URL a provider of this type is reached at when none was given."""
    if base_url:
        styled = provider_type in OPENAI_STYLE or provider_type == "anthropic"
        return normalize_base_url(base_url) if styled else base_url.rstrip("/")
    if provider_type == "anthropic":
        return anthropic_models.ANTHROPIC_URL
    if provider_type == "minimax":
        return minimax_models.MINIMAX_URL
    return OPENAI_STYLE.get(provider_type, ("", None))[1]


def llm_entry(
    source: ProviderSource,
    model: str,
    *,
    endpoint_type: str,
    endpoint: str | None,
    context_window: int,
    max_tokens: int,
    handle_model: str | None = None,
) -> dict[str, Any]:
    """The LLMConfig wire dict listed for one chat model (a gpt-5 model with Letta's default verbosity), under
    `source/handle_model` (default: the model)."""
    return LLMConfig(
        model=model,
        verbosity="medium" if model.startswith("gpt-5") else None,
        model_endpoint_type=endpoint_type,
        model_endpoint=endpoint,
        context_window=context_window,
        handle=f"{source.handle_prefix or source.name}/{handle_model or model}",
        max_tokens=max_tokens,
        provider_name=source.name,
        provider_category=source.category,
    ).model_dump(mode="json")


def embedding_entry(source: ProviderSource, model: str, *, endpoint: str | None, dim: int) -> dict[str, Any]:
    """The EmbeddingConfig wire dict listed for one embedding model (OpenAI-compatible endpoint)."""
    return EmbeddingConfig(
        embedding_endpoint_type="openai",
        embedding_endpoint=endpoint,
        embedding_model=model,
        embedding_dim=dim,
        embedding_chunk_size=km.EMBEDDING_CHUNK_SIZE,
        handle=f"{source.name}/{model}",
    ).model_dump(mode="json")


def _letta_models(source: ProviderSource) -> ModelLists:
    free = "letta-free"
    return ModelLists(
        llm=[
            llm_entry(
                source,
                free,
                endpoint_type="openai",
                endpoint=km.LETTA_ENDPOINT,
                context_window=km.DEFAULT_CONTEXT_WINDOW,
                max_tokens=km.DEFAULT_MAX_OUTPUT_TOKENS,
            )
        ],
        embedding=[embedding_entry(source, free, endpoint=km.LETTA_ENDPOINT, dim=1536)],
    )


def _headers(source: ProviderSource) -> dict[str, str]:
    if source.provider_type == "anthropic":
        return anthropic_models.headers(source.api_key)
    return {"Authorization": f"Bearer {source.api_key}"} if source.api_key else {}


async def _anthropic_models(source: ProviderSource, fetcher: Fetcher) -> ModelLists:
    url = source.base_url or anthropic_models.ANTHROPIC_URL
    ids = await anthropic_models.list_model_ids(fetcher, url, source.api_key)
    return ModelLists(llm=[anthropic_models.llm_config(source.name, source.category, url, m) for m in ids])


def _is_openai_chat_model(model: str) -> bool:
    return model.startswith(_OPENAI_PREFIXES) and not any(word in model for word in _OPENAI_EXCLUDED)


async def _openai_style_models(source: ProviderSource, fetcher: Fetcher) -> ModelLists:
    if not source.base_url:
        raise BadRequestError(f"Provider {source.name} of type {source.provider_type} needs a base_url")
    response = await fetcher.request("GET", f"{source.base_url}/models", headers=_headers(source))
    response.raise_for_status()
    body = response.json()
    data = body.get("data", []) if isinstance(body, dict) else body
    endpoint_type = OPENAI_STYLE[source.provider_type][0]
    official = source.base_url == OPENAI_URL
    lists = ModelLists()
    for entry in data if isinstance(data, list) else []:
        model = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model, str) or (official and not _is_openai_chat_model(model)):
            continue
        lists.llm.append(
            llm_entry(
                source,
                model,
                endpoint_type=endpoint_type,
                endpoint=source.base_url,
                context_window=km.context_window_for(model, entry),
                max_tokens=max_tokens(source.provider_type, model),
                handle_model=km.handle_name(source.name, model) if official else model,
            )
        )
    if source.provider_type == "openai":
        lists.llm += _fast_variants(source, lists.llm)
        # OpenAI's embeddings are a fixed list; its /models does not say which ids embed (Letta does the same).
        lists.embedding = [
            embedding_entry(source, name, endpoint=source.base_url, dim=dim)
            for name, dim in km.OPENAI_EMBEDDING_DIMS.items()
        ]
    return lists


def _fast_variants(source: ProviderSource, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Letta lists a `-fast` twin of these OpenAI models (same settings); a request for it is sent as the model
    itself on OpenAI's priority tier (`OpenAICompatibleClient.request_body`)."""
    return [
        entry | {"model": f"{entry['model']}{FAST_SUFFIX}", "handle": f"{source.name}/{entry['model']}{FAST_SUFFIX}"}
        for entry in listed
        if entry["model"] in _FAST_VARIANT_MODELS
    ]


def max_tokens(provider_type: str, model: str) -> int:
    """The `max_tokens` Letta lists for a model of an OpenAI-style provider."""
    if provider_type in _PLAIN_PROVIDERS:
        return _PLAIN_MAX_OUTPUT_TOKENS
    return km.openai_max_output_tokens(model)


async def _ollama_show(fetcher: Fetcher, root: str, name: str) -> dict[str, Any] | None:
    try:
        response = await fetcher.request("POST", f"{root}/api/show", json_body={"name": name})
        response.raise_for_status()
        details = response.json()
    except (FetchError, StatusError, ValueError):
        return None
    return details if isinstance(details, dict) else None


def _ollama_info(details: dict[str, Any], key: str) -> int | None:
    info = details.get("model_info") or {}
    arch = info.get("general.architecture") if isinstance(info, dict) else None
    value = info.get(f"{arch}.{key}") if arch else None
    return int(value) if isinstance(value, int | float) and value > 0 else None


async def _ollama_models(source: ProviderSource, fetcher: Fetcher) -> ModelLists:
    root = (source.base_url or "").removesuffix("/v1")
    endpoint = f"{root}/v1"
    response = await fetcher.request("GET", f"{root}/api/tags")
    response.raise_for_status()
    names = [m["name"] for m in response.json().get("models", []) if isinstance(m, dict) and m.get("name")]
    details = await asyncio.gather(*(_ollama_show(fetcher, root, n) for n in names))
    lists = ModelLists()
    for name, info in zip(names, details, strict=True):
        if info is None:
            continue
        caps = {str(c).lower() for c in info.get("capabilities") or []}
        # Only models that declare tool support can drive an agent.
        if "tools" in caps:
            window = _ollama_info(info, "context_length") or _OLLAMA_DEFAULT_WINDOW
            lists.llm.append(
                llm_entry(
                    source,
                    name,
                    endpoint_type="openai",
                    endpoint=endpoint,
                    context_window=window,
                    max_tokens=km.OPENAI_MAX_OUTPUT_TOKENS,
                )
            )
        dim = _ollama_info(info, "embedding_length")
        if "embedding" in caps and dim:
            lists.embedding.append(embedding_entry(source, name, endpoint=endpoint, dim=dim))
    return lists


async def fetch_models(source: ProviderSource, *, timeout_s: float, policy: OutboundPolicy | None = None) -> ModelLists:
    """The chat and embedding models `source` serves; raises on network or protocol errors.

    Connections obey the outbound URL `policy` (default: public addresses only; redirects are not followed).
    """
    if source.provider_type == "letta":
        return _letta_models(source)
    if source.provider_type == "minimax":  # MiniMax has no model listing: Letta's fixed list
        return ModelLists(llm=minimax_models.llm_configs(source.name, source.category, source.base_url))
    try:
        async with Fetcher(policy or OutboundPolicy(), timeout_s) as fetcher:
            if source.provider_type == "ollama":
                return await _ollama_models(source, fetcher)
            if source.provider_type == "anthropic":
                return await _anthropic_models(source, fetcher)
            if source.provider_type in OPENAI_STYLE:
                return await _openai_style_models(source, fetcher)
    except UnsendableRequestError as exc:
        raise unsendable_request() from exc
    raise BadRequestError(f"Listing the models of a {source.provider_type} provider is not supported")


def unsendable_request() -> BadRequestError:
    """A base URL with control characters or a key that is not ASCII cannot even be put on the wire."""
    return BadRequestError(
        "INVALID_ARGUMENT: The provider's base URL or API key holds characters that cannot be sent over HTTP"
    )


async def check_key(source: ProviderSource, *, timeout_s: float, policy: OutboundPolicy) -> None:
    """Verify a key by listing models with it; raises Letta's llm_* errors when the provider refuses.

    The errors never carry the provider's answer, status code or connection error: a check must not tell a
    caller what answers at an address (the URL is checked against `policy` before this is called).
    """
    if not source.api_key:
        raise BadRequestError("API key is required!")
    listable = source.provider_type in OPENAI_STYLE or source.provider_type in ("anthropic", "minimax")
    if not listable or not source.base_url:
        raise BadRequestError(f"Checking a {source.provider_type} provider's key is not supported")
    minimax = source.provider_type == "minimax"
    try:
        async with Fetcher(policy, timeout_s) as fetcher:
            if minimax:  # no model listing: Letta counts the tokens of a one-letter message instead
                url, headers, body = minimax_models.key_check(source.base_url, source.api_key)
                response = await fetcher.request("POST", url, headers=headers, json_body=body, max_bytes=0)
            else:
                url, headers = f"{source.base_url}/models", _headers(source)
                response = await fetcher.request("GET", url, headers=headers, max_bytes=0)
    except UnsendableRequestError as exc:
        raise unsendable_request() from exc
    except FetchError as exc:
        raise LLMError(
            "An error occurred with the LLM request.",
            detail=f"INTERNAL_SERVER_ERROR: could not reach the {source.provider_type} provider",
        ) from exc
    if response.status == 401:
        raise LLMError(
            "Authentication failed with the LLM model provider.",
            error_type="llm_authentication",
            status_code=401,
            detail=f"UNAUTHENTICATED: Failed to authenticate with {'MiniMax' if minimax else source.provider_type}",
        )
    if response.status == 403 and not minimax:  # Letta's MiniMax check words only a 401 apart
        raise LLMError(
            "An error occurred with the LLM request.",
            detail=f"PERMISSION_DENIED: Permission denied by {source.provider_type}",
        )
    if response.status >= 400:
        raise LLMError(
            "An error occurred with the LLM request.",
            detail=f"INTERNAL_SERVER_ERROR: the {source.provider_type} provider did not accept the request",
        )
