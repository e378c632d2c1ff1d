"""The providers the environment configures (Letta's `base` category), under Letta's variable names.

Each is a `ProviderSource` whose models are listed once at start-up, and, when it has a key, an `EndpointKey` that
binds that key to the provider's own URL (a key never goes anywhere else). Letta 0.16.8 enables the same set from
the same variables, except Google (AI and Vertex), Azure and Bedrock, which memlet cannot list or call.
"""

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import SecretStr

from memlet.config import Settings
from memlet.providers import known_models as km
from memlet.providers.endpoints import EndpointKey
from memlet.providers.minimax_models import MINIMAX_URL
from memlet.providers.remote import OPENAI_STYLE, OPENAI_URL, ProviderSource, normalize_base_url


@dataclass(frozen=True)
class _Keyed:
    """A provider enabled by an API key: (its name, its type, the key, its URL)."""

    name: Callable[[Settings], str]
    provider_type: str
    key: Callable[[Settings], SecretStr | None]
    url: Callable[[Settings], str]


@dataclass(frozen=True)
class _Local:
    """A keyless server enabled by its URL (Letta adds `/v1` when the URL lacks it)."""

    name: Callable[[Settings], str]
    provider_type: str
    url: Callable[[Settings], str | None]


def _fixed(name: str) -> Callable[[Settings], str]:
    return lambda _: name


def _official(provider_type: str) -> Callable[[Settings], str]:
    url = OPENAI_STYLE[provider_type][1]
    assert url is not None
    return lambda _: url


# In Letta's order (letta/server/server.py): the order of GET /v1/models/ comes from `catalog.PROVIDER_ORDER`.
_KEYED = (
    _Keyed(_fixed("openai"), "openai", lambda s: s.openai_api_key, lambda s: normalize_base_url(s.openai_base_url)),
    _Keyed(
        _fixed("anthropic"),
        "anthropic",
        lambda s: s.anthropic_api_key,
        lambda s: normalize_base_url(s.anthropic_base_url),
    ),
    _Keyed(_fixed("groq"), "groq", lambda s: s.groq_api_key, _official("groq")),
    _Keyed(_fixed("together"), "together", lambda s: s.together_api_key, _official("together")),
    _Keyed(_fixed("deepseek"), "deepseek", lambda s: s.deepseek_api_key, _official("deepseek")),
    _Keyed(_fixed("xai"), "xai", lambda s: s.xai_api_key, _official("xai")),
    _Keyed(_fixed("minimax"), "minimax", lambda s: s.minimax_api_key, lambda _: MINIMAX_URL),
    _Keyed(_fixed("baseten"), "baseten", lambda s: s.baseten_api_key, _official("baseten")),
    _Keyed(_fixed("zai"), "zai", lambda s: s.zai_api_key, lambda s: normalize_base_url(s.zai_base_url)),
    _Keyed(
        lambda s: s.openrouter_handle_base or "openrouter",
        "openrouter",
        lambda s: s.openrouter_api_key,
        _official("openrouter"),
    ),
)
_LOCAL = (
    _Local(_fixed("ollama"), "ollama", lambda s: s.ollama_base_url.rstrip("/") if s.ollama_base_url else None),
    _Local(lambda s: s.vllm_handle_base or "vllm", "vllm", lambda s: _v1(s.vllm_api_base)),
    _Local(lambda s: s.sglang_handle_base or "sglang", "sglang", lambda s: _v1(s.sglang_api_base)),
    _Local(_fixed("lmstudio_openai"), "lmstudio_openai", lambda s: _v1(s.lmstudio_base_url)),
)


def _v1(url: str | None) -> str | None:
    if not url:
        return None
    url = url.rstrip("/")
    return url if url.endswith("/v1") else f"{url}/v1"


def env_sources(settings: Settings) -> list[ProviderSource]:
    """The providers the environment configures: `letta` always, then each one whose key or URL is set."""
    sources = [ProviderSource(name="letta", provider_type="letta", category="base", base_url=km.LETTA_ENDPOINT)]
    for keyed in _KEYED:
        key = keyed.key(settings)
        if key is not None:
            url = keyed.url(settings)
            # Letta's handles for an OpenAI-compatible server that is not OpenAI's, when asked for.
            proxy = keyed.provider_type == "openai" and settings.openai_proxy_handles and url != OPENAI_URL
            sources.append(
                ProviderSource(
                    keyed.name(settings),
                    keyed.provider_type,
                    "base",
                    url,
                    key.get_secret_value(),
                    handle_prefix="openai-proxy" if proxy else None,
                )
            )
    for local in _LOCAL:
        local_url = local.url(settings)
        if local_url:
            sources.append(ProviderSource(local.name(settings), local.provider_type, "base", local_url))
    return sources


def env_keys(settings: Settings) -> list[EndpointKey]:
    """Each key the environment holds, bound to its own provider's URL and named by the API it speaks (an agent's
    `model_endpoint_type`)."""
    bindings = []
    for keyed in _KEYED:
        key = keyed.key(settings)
        if key is not None:
            endpoint_type = OPENAI_STYLE.get(keyed.provider_type, (keyed.provider_type, None))[0]
            bindings.append(EndpointKey(keyed.url(settings), key.get_secret_value(), endpoint_type))
    return bindings
