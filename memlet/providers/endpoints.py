"""Where an agent's chat requests go and with which key.

The URL is the llm_config's `model_endpoint`, else the default of its endpoint type (never another provider's).
The key follows the URL, never the endpoint type: an environment key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GROQ_API_KEY,
...: `env_providers.env_keys`) is sent only to its own provider's configured base URL, a BYOK provider's key only to that provider's base URL, and an
endpoint that is neither gets no key at all.
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.crypto import Keyring
from memlet.errors import BadRequestError
from memlet.net.outbound import DEFAULT_PORTS
from memlet.providers.minimax_models import MINIMAX_URL
from memlet.providers.remote import OPENAI_STYLE, default_base_url, normalize_base_url
from memlet.providers.repository import ProviderRepository

DEEPSEEK_URL = "https://api.deepseek.com/v1"
OLLAMA_URL = "http://localhost:11434/v1"
# model_endpoint_type -> base URL used when an llm_config has no model_endpoint (None: one must be given).
ENDPOINT_DEFAULTS: dict[str, str | None] = {
    **{kind: url for kind, url in OPENAI_STYLE.values() if kind != "openai"},
    "deepseek": DEEPSEEK_URL,
    "mistral": "https://api.mistral.ai/v1",
    "fireworks": "https://api.fireworks.ai/inference/v1",
    "minimax": MINIMAX_URL,
    "lmstudio": "http://localhost:1234/v1",
    "lmstudio-chatcompletions": "http://localhost:1234/v1",
}


def endpoint_url(llm_config: dict[str, object], settings: Settings) -> str:
    """The base URL this llm_config's chat requests go to."""
    given = llm_config.get("model_endpoint")
    if isinstance(given, str) and given.strip():
        return given.strip()
    kind = str(llm_config.get("model_endpoint_type") or "openai")
    if kind == "openai":
        return normalize_base_url(settings.openai_base_url)
    if kind == "ollama":
        return normalize_base_url(settings.ollama_base_url or OLLAMA_URL)
    if kind == "anthropic":
        return normalize_base_url(settings.anthropic_base_url)
    default = ENDPOINT_DEFAULTS.get(kind)
    if default is None:
        raise BadRequestError(f"INVALID_ARGUMENT: llm_config.model_endpoint is required for endpoint type '{kind}'")
    return default


def _url_key(url: str) -> tuple[str, str, int | None, str]:
    parts = urlsplit(normalize_base_url(url.strip()))
    scheme = parts.scheme.lower()
    try:
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").rstrip(".").lower(), port, parts.path.rstrip("/")


def same_endpoint(a: str, b: str) -> bool:
    """True when two base URLs name the same endpoint (case, default port, trailing slash and /v1 aside)."""
    return _url_key(a) == _url_key(b)


@dataclass(frozen=True)
class EndpointKey:
    """A key and the only base URL it may be sent to."""

    base_url: str
    api_key: str
    endpoint_type: str | None = None  # the environment's keys name their API; BYOK keys do not


def key_for(url: str, candidates: list[EndpointKey], endpoint_type: str | None = None) -> str | None:
    """The key of the first candidate bound to `url`, else None (a foreign endpoint gets no key).

    When several are bound to the URL (one proxy serving two APIs), a BYOK key or the environment's key for
    `endpoint_type` goes first.
    """
    bound = [c for c in candidates if same_endpoint(c.base_url, url)]
    preferred = [c for c in bound if c.endpoint_type in (None, endpoint_type)]
    chosen = preferred or bound
    return chosen[0].api_key if chosen else None


async def byok_keys(
    sessionmaker: async_sessionmaker[AsyncSession], keyring: Keyring, org_id: str, provider_name: str
) -> list[EndpointKey]:
    """The key of the organization's BYOK provider `provider_name`, bound to its base URL (none when unknown)."""
    async with sessionmaker() as session:
        row = await ProviderRepository(session).find_by_name(org_id, provider_name)
    key = keyring.reveal(row.api_key, f"API key of provider {provider_name!r}") if row is not None else None
    if row is None or not key:
        return []
    url = default_base_url(row.provider_type, row.base_url)
    return [EndpointKey(url, key)] if url else []
