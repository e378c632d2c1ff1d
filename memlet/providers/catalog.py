"""The model catalog: which chat and embedding models exist, under which handle, and the configs agents store.

Models come from three places:

- providers configured by the environment (`letta`, always; `openai` when OPENAI_API_KEY is set, `groq` when
  GROQ_API_KEY is, `vllm` when VLLM_API_BASE is, ...: `env_providers`). Their lists are fetched once at start-up
  (`ModelCatalog.load`) and kept in memory: they derive from the environment, so every worker holds the same
  lists. A failed fetch is only logged.
- BYOK providers (rows made through `/v1/providers`), listed live per request and cached per process for
  `BYOK_TTL_S` seconds, keyed by the row's `updated_at` so an edit is seen at once. Creating or refreshing one
  stores its list on its row (as Letta stores it), which serves while a live listing fails.

Handles are `provider_name/model`. Letta 0.16.8 renames an OpenAI-compatible server that is not api.openai.com
to `openai-proxy/<model>`; we list `openai/<model>` and accept `openai-proxy/<model>` as an alias.
"""

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.config import Settings
from memlet.crypto import SecretDecryptError, keyring_for
from memlet.db import models as orm
from memlet.errors import BadRequestError, NotFoundError
from memlet.log import get_logger
from memlet.net.outbound import policy_for
from memlet.providers import known_models as km
from memlet.providers.aliases import successor_handle
from memlet.providers.env_providers import env_sources
from memlet.providers.model_settings import llm_params_from_settings, settings_from_llm_config
from memlet.providers.remote import ModelLists, ProviderSource, default_base_url, fetch_models, normalize_base_url
from memlet.providers.repository import ProviderRepository
from memlet.providers.schemas import EmbeddingConfig, EmbeddingModel, LLMConfig, Model

log = get_logger("providers.catalog")

OPENAI_PROXY = "openai-proxy"
BYOK_TTL_S = 30.0
# Letta lists providers in this order, then by provider name and model name.
PROVIDER_ORDER = {
    "letta": 0,
    "openai": 1,
    "anthropic": 2,
    "ollama": 3,
    "google_ai": 4,
    "google_vertex": 5,
    "azure": 6,
    "groq": 7,
    "together": 8,
    "vllm": 9,
    "bedrock": 10,
    "deepseek": 11,
    "xai": 12,
    "lmstudio": 13,
    "zai": 14,
    "zai_coding": 15,
    "openrouter": 16,
}
BAD_MODEL_HANDLE = "INVALID_ARGUMENT: The model handle should be in the format provider/model-name"
BAD_EMBEDDING_HANDLE = "INVALID_ARGUMENT: The embedding handle should be in the format provider/model-name"


@dataclass
class _Cached:
    expires_at: float
    updated_at: object
    lists: ModelLists


@dataclass
class _Listing:
    """The models of every provider visible to one organization, in Letta's order."""

    entries: list[tuple[ProviderSource, ModelLists]] = field(default_factory=list)

    def llm(self) -> list[tuple[ProviderSource, dict[str, Any]]]:
        rows = [(s, c) for s, lists in self.entries for c in lists.llm]
        return sorted(rows, key=lambda r: (PROVIDER_ORDER.get(r[0].name, 999), r[0].name, r[1]["model"]))

    def embedding(self) -> list[tuple[ProviderSource, dict[str, Any]]]:
        rows = [(s, c) for s, lists in self.entries for c in lists.embedding]

        def key(row: tuple[ProviderSource, dict[str, Any]]) -> tuple[int, str, str]:
            prefix = (row[1].get("handle") or "").split("/")[0]
            return (PROVIDER_ORDER.get(prefix, 999), prefix, row[1]["embedding_model"])

        return sorted(rows, key=key)


def _stored_models(row: orm.Provider) -> ModelLists:
    """The models a BYOK provider listed at its last sync (none when it never listed any)."""
    stored = row.models or {}
    return ModelLists(llm=list(stored.get("llm") or []), embedding=list(stored.get("embedding") or []))


def _split_handle(handle: str) -> tuple[str, str] | None:
    provider, sep, name = handle.partition("/")
    return (provider, name) if sep and provider and name else None


def _resolved(provider_type: str, config: dict[str, Any], kind: str) -> dict[str, Any]:
    """A listed config as a handle resolves to it: an SGLang provider's chat models come with `return_logprobs` and
    `return_token_ids` on, as Letta's (its RL-training setup; memlet serves the logprobs, not the token ids)."""
    if provider_type != "sglang" or kind != "llm":
        return config
    return {**config, "return_logprobs": True, "return_token_ids": True}


class ModelCatalog:
    """Every model memlet can serve, plus the conversions between handles, llm_configs and model_settings."""

    def __init__(self, settings: Settings, *, timeout_s: float = 5.0) -> None:
        self.settings = settings
        self.keyring = keyring_for(settings)
        self.timeout_s = timeout_s
        self.outbound = policy_for(settings)  # also reads MEMLET_ALLOWED_HOSTS at start-up: a bad entry stops it
        self.base: list[tuple[ProviderSource, ModelLists]] = [(s, ModelLists()) for s in env_sources(settings)]
        self._byok: dict[str, _Cached] = {}
        # Env providers whose start-up listing failed, and when to try them again.
        self._retry_at: dict[str, float] = {}

    @property
    def default_llm_handle(self) -> str | None:
        """The model of an agent created without one (MEMLET_ / LETTA_DEFAULT_LLM_HANDLE)."""
        return self.settings.default_llm_handle

    @property
    def default_embedding_handle(self) -> str | None:
        """The embedding of an agent created without one (MEMLET_ / LETTA_DEFAULT_EMBEDDING_HANDLE)."""
        return self.settings.default_embedding_handle

    async def check_endpoint(self, config: dict[str, Any] | None, key: str, field: str) -> None:
        """400 when the outbound URL policy refuses an endpoint a client put in a config (memlet.net.outbound)."""
        url = (config or {}).get(key)
        if isinstance(url, str) and url:
            await self.outbound.check_url(url, field)

    @property
    def base_provider_names(self) -> set[str]:
        return {s.name for s, _ in self.base}

    async def load(self) -> None:
        """Fetch the env providers' model lists once; one that cannot be reached is retried on use, at most
        every `BYOK_TTL_S` seconds, so a provider that was down at start-up appears once it is up."""
        sources = [s for s, _ in self.base]
        results = await asyncio.gather(*(self._fetch(s) for s in sources))
        self.base = [(s, lists or ModelLists()) for s, lists in zip(sources, results, strict=True)]
        self._retry_at = {
            s.name: time.monotonic() + BYOK_TTL_S for s, r in zip(sources, results, strict=True) if r is None
        }

    async def _retry_failed(self) -> None:
        now = time.monotonic()
        due = [s for s, _ in self.base if self._retry_at.get(s.name, float("inf")) <= now]
        if not due:
            return
        for source in due:
            self._retry_at[source.name] = now + BYOK_TTL_S
        results = dict(zip([s.name for s in due], await asyncio.gather(*(self._fetch(s) for s in due)), strict=True))
        for i, (source, _) in enumerate(self.base):
            lists = results.get(source.name)
            if lists is not None:
                self.base[i] = (source, lists)
                self._retry_at.pop(source.name, None)

    async def _fetch(self, source: ProviderSource) -> ModelLists | None:
        try:
            return await fetch_models(source, timeout_s=self.timeout_s, policy=self.outbound)
        except Exception as exc:  # any failure of a remote listing must not stop the server
            log.warning("could not list models of provider %s: %s", source.name, exc)
            return None

    async def byok_models(self, row: orm.Provider) -> ModelLists:
        """A BYOK provider's models, from the per-process cache when fresh."""
        cached = self._byok.get(row.id)
        now = time.monotonic()
        if cached and cached.expires_at > now and cached.updated_at == row.updated_at:
            return cached.lists
        try:
            source = ProviderSource.from_row(row, self.keyring)
        except SecretDecryptError as exc:
            log.error("could not list models of provider %s: %s", row.name, exc.message)
            return ModelLists()
        lists = await self._fetch(source) or _stored_models(row)
        self._byok[row.id] = _Cached(now + BYOK_TTL_S, row.updated_at, lists)
        return lists

    async def refresh(self, row: orm.Provider) -> bool:
        """List a BYOK provider's models now, cache them and keep them on the row (served while the provider cannot
        be listed); False when the provider could not be reached."""
        try:
            source = ProviderSource.from_row(row, self.keyring)
            lists = await fetch_models(source, timeout_s=self.timeout_s, policy=self.outbound)
        except Exception as exc:  # a provider that cannot be listed is still saved, as in Letta
            log.warning("could not list models of provider %s: %s", row.name, exc)
            return False
        self._byok[row.id] = _Cached(time.monotonic() + BYOK_TTL_S, row.updated_at, lists)
        row.models = {"llm": lists.llm, "embedding": lists.embedding}
        return True

    def forget(self, provider_id: str) -> None:
        """Drop a BYOK provider's cached models (after an edit, a delete or a refresh)."""
        self._byok.pop(provider_id, None)

    async def _listing(
        self, session: AsyncSession, org_id: str, categories: Iterable[str] | None = None, name: str | None = None
    ) -> _Listing:
        wanted = set(categories or ("base", "byok"))
        await self._retry_failed()
        listing = _Listing()
        if "base" in wanted:
            listing.entries += [(s, m) for s, m in self.base if name is None or s.name == name]
        if "byok" in wanted:
            rows = await ProviderRepository(session).list(org_id, name=name)
            lists = await asyncio.gather(*(self.byok_models(r) for r in rows))
            listing.entries += [(ProviderSource.from_row(r, None), m) for r, m in zip(rows, lists, strict=True)]
        return listing

    async def list_models(
        self,
        session: AsyncSession,
        org_id: str,
        *,
        provider_category: Sequence[str] | None = None,
        provider_name: str | None = None,
        provider_type: str | None = None,
    ) -> list[Model]:
        """`GET /v1/models/`: chat models of the env and BYOK providers, filtered as asked."""
        listing = await self._listing(session, org_id, provider_category, provider_name)
        return [
            Model.from_llm_config(LLMConfig.model_validate(config))
            for source, config in listing.llm()
            if provider_type is None or source.provider_type == provider_type
        ]

    async def list_embedding_models(self, session: AsyncSession, org_id: str) -> list[EmbeddingModel]:
        """`GET /v1/models/embedding`: embedding models of the env and BYOK providers."""
        listing = await self._listing(session, org_id)
        models = []
        for _, config in listing.embedding():
            kind = config["embedding_endpoint_type"]
            # Letta names both the type and the provider after the endpoint type here (letta-free shows "openai").
            config_model = EmbeddingConfig.model_validate(config)
            models.append(EmbeddingModel.from_embedding_config(config_model, provider_type=kind, provider_name=kind))
        return models

    async def _find(
        self, session: AsyncSession, org_id: str, handle: str, kind: str
    ) -> tuple[dict[str, Any] | None, list[str]]:
        """The config listed under `handle` (`kind` is "llm" or "embedding"), and every handle of that kind."""
        provider, name = _split_handle(handle) or ("", "")
        await self._retry_failed()
        lookups = [handle]
        if provider == OPENAI_PROXY:
            lookups.append(f"openai/{name}")
        names = {provider, "openai"} if provider == OPENAI_PROXY else {provider}
        seen: list[str] = []
        for source, lists in self.base:
            configs = lists.llm if kind == "llm" else lists.embedding
            seen += [c["handle"] for c in configs]
            if source.name in names:
                for wanted in lookups:
                    match = next((c for c in configs if c["handle"] == wanted), None)
                    if match:
                        return _resolved(source.provider_type, match, kind), seen
                # A model listed under a short handle (`known_models.handle_name`) is still found by its own id.
                match = next((c for c in configs if c.get("model") == name), None)
                if match:
                    return _resolved(source.provider_type, match, kind), seen
        row = await ProviderRepository(session).find_by_name(org_id, provider)
        if row is not None:
            lists = await self.byok_models(row)
            configs = lists.llm if kind == "llm" else lists.embedding
            seen += [c["handle"] for c in configs]
            match = next((c for c in configs if c["handle"] == handle), None)
            if match is None and kind == "llm":
                # Letta falls back to matching the model name alone for BYOK chat models.
                match = next((c for c in configs if c["model"] == name), None)
            if match:
                return _resolved(row.provider_type, match, kind), seen
        return None, seen

    async def resolve_llm(
        self,
        session: AsyncSession,
        org_id: str,
        handle: str,
        *,
        context_window_limit: int | None = None,
        model_settings: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The llm_config (wire dict) an agent stores for `handle`.

        The window is the model's, capped at 128,000, unless `context_window_limit` is given (then it wins, even
        above the model's). `model_settings` overrides fields as Letta's legacy mapping does.
        """
        if _split_handle(handle) is None:
            raise BadRequestError(BAD_MODEL_HANDLE)
        found, seen = await self._find(session, org_id, handle, "llm")
        listed = handle
        if found is None and (successor := successor_handle(handle)):
            # A model Google retired: Letta looks its successor up instead, and the agent gets the successor's handle.
            listed = successor
            found, seen = await self._find(session, org_id, listed, "llm")
        if found is None:
            raise NotFoundError("Handle", message=f"NOT_FOUND: Handle {handle} not found, must be one of {seen}")
        config = {**found, "handle": listed}
        if context_window_limit is not None:
            config["context_window"] = context_window_limit
        else:
            config["context_window"] = min(config["context_window"], km.GLOBAL_MAX_CONTEXT_WINDOW)
        if model_settings:
            config |= llm_params_from_settings(model_settings)
        return LLMConfig.model_validate(config).model_dump(mode="json")

    async def resolve_embedding(self, session: AsyncSession, org_id: str, handle: str) -> dict[str, Any]:
        """The embedding_config (wire dict) an agent stores for `handle`."""
        if _split_handle(handle) is None:
            raise BadRequestError(BAD_EMBEDDING_HANDLE)
        found, _ = await self._find(session, org_id, handle, "embedding")
        if found is None:
            raise BadRequestError(f"INVALID_ARGUMENT: Embedding model {handle} not found")
        return EmbeddingConfig.model_validate({**found, "handle": handle}).model_dump(mode="json")

    def model_settings_for(self, llm_config: dict[str, Any]) -> dict[str, Any]:
        """The `model_settings` an AgentState shows for this llm_config."""
        return settings_from_llm_config(llm_config)

    def apply_reasoning(self, llm_config: dict[str, Any], reasoning: bool | None, agent_type: str) -> dict[str, Any]:
        """Set the reasoning flags at agent creation as Letta does (`reasoning` None: the model's default).

        Letta turns an omitted `reasoning` into `enable_reasoner or put_inner_thoughts_in_kwargs` (true for a
        freshly resolved handle); a letta_v1_agent then keeps reasoning only on models that reason natively.
        """
        if reasoning is None:
            reasoning = bool(llm_config.get("enable_reasoner", True) or llm_config.get("put_inner_thoughts_in_kwargs"))
        return km.apply_reasoning(llm_config, reasoning, agent_type)

    def normalize_llm_config(self, llm_config: dict[str, Any]) -> dict[str, Any]:
        """A client-given legacy llm_config with Letta's model defaults filled in (the handle is kept as given)."""
        kind = llm_config.get("model_endpoint_type") or ""
        if kind == "openai":
            endpoint: str | None = normalize_base_url(self.settings.openai_base_url)
        elif kind == "anthropic":
            endpoint = normalize_base_url(self.settings.anthropic_base_url)
        else:
            endpoint = default_base_url(kind, None)
        config = km.normalize_llm_config(llm_config, default_endpoint=endpoint)
        return LLMConfig.model_validate(config).model_dump(mode="json")


# Listing a provider's models must not hold up start-up or a request for long.
CATALOG_TIMEOUT_S = 5.0


async def load_catalog(settings: Settings) -> ModelCatalog:
    """The app's catalog: built from the settings, with the environment's providers listed once (at start-up)."""
    catalog = ModelCatalog(settings, timeout_s=min(CATALOG_TIMEOUT_S, settings.llm_timeout_s))
    await catalog.load()
    return catalog
