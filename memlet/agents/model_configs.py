"""An agent's `llm_config` and `embedding_config` from a create or update request: a handle resolved through the
model catalog, or a client-given config normalized and its endpoint checked against the outbound URL policy; then
the request's overrides, in Letta's order: the deprecated `max_tokens` / `max_reasoning_tokens` / `enable_reasoner`,
`model_settings`, `parallel_tool_calls` and, on an update, `reasoning`."""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.catalog import Catalog
from memlet.agents.schemas import CreateAgent, UpdateAgent
from memlet.errors import BadRequestError
from memlet.providers.model_settings import llm_params_from_settings
from memlet.providers.schemas import LLMConfig


class ModelConfigs:
    def __init__(self, session: AsyncSession, catalog: Catalog) -> None:
        self.session = session
        self.catalog = catalog

    async def llm_config(self, actor: Actor, req: CreateAgent) -> dict[str, Any] | None:
        """A new agent's llm_config (None: the request names no model)."""
        config = await self._named(actor, req)
        if config is None:
            return None
        if req.model and not req.llm_config:  # Letta applies the deprecated limits only to a handle it resolves
            config = _deprecated_limits(config, req)
        if req.model_settings is not None:
            config |= llm_params_from_settings(req.model_settings.model_dump(exclude_unset=True))
        if req.parallel_tool_calls is not None:
            config["parallel_tool_calls"] = req.parallel_tool_calls
        return _valid(config)

    async def updated_llm_config(
        self, actor: Actor, req: UpdateAgent, current: dict[str, Any], agent_type: str
    ) -> dict[str, Any] | None:
        """The agent's new llm_config after a PATCH, or None when the request changes none of it.

        Unlike Letta, a PATCH of only `context_window_limit` or `max_tokens` changes that field of the current
        config instead of resolving the handle afresh (which would reset every other setting, and fails for an
        agent made from a raw llm_config, which has no handle)."""
        sent = req.model_fields_set
        config = await self._named(actor, req) if (req.model or req.llm_config) else None
        if config is None and req.context_window_limit:
            config = {**current, "context_window": req.context_window_limit}
        if "max_tokens" in sent:  # an explicit null clears it
            config = {**(config or current), "max_tokens": req.max_tokens}
        if req.model_settings is not None:
            settings = req.model_settings.model_dump(exclude_unset=True)
            if config is None:
                config = dict(current)
            elif "max_tokens" not in sent and "max_output_tokens" not in settings:
                config["max_tokens"] = current.get("max_tokens")  # a new model keeps the agent's output limit
            config |= llm_params_from_settings(settings)
        if req.parallel_tool_calls is not None:
            config = {**(config or current), "parallel_tool_calls": req.parallel_tool_calls}
        if req.reasoning is not None:
            config = self.catalog.apply_reasoning(config or current, req.reasoning, agent_type)
        return None if config is None else _valid(config)

    async def _named(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        """The config of the request's raw `llm_config`, else of its `model` handle, at its `context_window_limit`
        (a request with both gets its `llm_config`, as Letta resolves the handle only without one)."""
        if req.llm_config:
            config = self.catalog.normalize_llm_config(req.llm_config.model_dump(mode="json"))
            await self._check_endpoint(config, "model_endpoint", "llm_config.model_endpoint")
            if req.context_window_limit:
                config["context_window"] = req.context_window_limit
            return config
        if req.model:
            return await self.catalog.resolve_llm(
                self.session, actor.organization_id, req.model, context_window_limit=req.context_window_limit
            )
        return None

    async def embedding_config(self, actor: Actor, req: CreateAgent | UpdateAgent) -> dict[str, Any] | None:
        """A create's raw `embedding_config` wins over its `embedding` handle; a PATCH's handle wins (as in Letta)."""
        if req.embedding and not (isinstance(req, CreateAgent) and req.embedding_config):
            resolved = await self.catalog.resolve_embedding(self.session, actor.organization_id, req.embedding)
            if isinstance(req, CreateAgent) and req.embedding_chunk_size:  # deprecated, still honoured by Letta
                resolved["embedding_chunk_size"] = req.embedding_chunk_size
            return resolved
        config = req.embedding_config.model_dump(mode="json") if req.embedding_config else None
        await self._check_endpoint(config, "embedding_endpoint", "embedding_config.embedding_endpoint")
        return config

    async def _check_endpoint(self, config: dict[str, Any] | None, key: str, field: str) -> None:
        """400 when the outbound URL policy refuses a client-given endpoint (memlet.net.outbound)."""
        url = (config or {}).get(key)
        if isinstance(url, str) and url:
            await self.catalog.outbound.check_url(url, field)


def _valid(config: dict[str, Any]) -> dict[str, Any]:
    return LLMConfig.model_validate(config).model_dump(mode="json")


def _deprecated_limits(config: dict[str, Any], req: CreateAgent) -> dict[str, Any]:
    """CreateAgent's deprecated `max_tokens`, `max_reasoning_tokens` and `enable_reasoner` (only when sent: its
    default is left to the reasoning policy), checked and applied as Letta does."""
    config = dict(config)
    if req.max_tokens is not None:
        config["max_tokens"] = req.max_tokens
    if req.max_reasoning_tokens is not None:
        if not req.max_tokens or req.max_reasoning_tokens > req.max_tokens:
            raise BadRequestError(
                f"INVALID_ARGUMENT: Max reasoning tokens ({req.max_reasoning_tokens}) must be less than max tokens "
                f"({req.max_tokens})"
            )
        config["max_reasoning_tokens"] = req.max_reasoning_tokens
    if "enable_reasoner" in req.model_fields_set and req.enable_reasoner is not None:
        config["enable_reasoner"] = req.enable_reasoner
        if req.enable_reasoner and config.get("model_endpoint_type") == "anthropic":
            config["put_inner_thoughts_in_kwargs"] = False
    return config
