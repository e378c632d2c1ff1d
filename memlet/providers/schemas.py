"""Wire models for LLM/embedding configuration, the model listings and providers (Letta 0.16.8 names).

`LLMConfig` and `EmbeddingConfig` are deprecated on Letta's API but still returned inside every `AgentState`;
`Model` and `EmbeddingModel` are the items of `GET /v1/models/` and `GET /v1/models/embedding`.

Provider credentials never leave the server: `Provider` always serializes `api_key`, `access_key` and their
`*_enc` twins as null, whatever the object holds (Letta returns them; a client has no use for them).
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator, model_validator

from memlet.providers.aliases import redirect_retired_model
from memlet.providers.model_settings import (
    AnthropicModelSettings,
    AzureModelSettings,
    BasetenModelSettings,
    BedrockModelSettings,
    ChatGPTOAuthModelSettings,
    DeepseekModelSettings,
    Effort,
    GoogleAIModelSettings,
    GoogleVertexModelSettings,
    GroqModelSettings,
    JsonObjectResponseFormat,
    JsonSchemaResponseFormat,
    ModelSettings,
    OpenAIModelSettings,
    OpenRouterModelSettings,
    OtherModelSettings,
    ReasoningEffort,
    ResponseFormat,
    SGLangModelSettings,
    TextResponseFormat,
    TogetherModelSettings,
    Verbosity,
    XAIModelSettings,
    ZAIModelSettings,
    model_settings_class,
)

__all__ = [
    "AnthropicModelSettings",
    "AzureModelSettings",
    "BasetenModelSettings",
    "BedrockModelSettings",
    "ChatGPTOAuthModelSettings",
    "DeepseekModelSettings",
    "EmbeddingConfig",
    "EmbeddingModel",
    "GoogleAIModelSettings",
    "GoogleVertexModelSettings",
    "GroqModelSettings",
    "JsonObjectResponseFormat",
    "JsonSchemaResponseFormat",
    "LLMConfig",
    "Model",
    "ModelSettings",
    "OpenAIModelSettings",
    "OpenRouterModelSettings",
    "OtherModelSettings",
    "Provider",
    "ProviderCategory",
    "ProviderCheck",
    "ProviderCreate",
    "ProviderType",
    "ProviderUpdate",
    "ResponseFormat",
    "SGLangModelSettings",
    "TextResponseFormat",
    "TogetherModelSettings",
    "XAIModelSettings",
    "ZAIModelSettings",
    "model_settings_class",
]

# Marks a field deprecated in the OpenAPI schema only; pydantic's own `deprecated=` would warn on every read.
_DEPRECATED: dict[str, Any] = {"deprecated": True}

ProviderCategory = Literal["base", "byok"]
# 0.16.8's enum plus the two values letta-client 1.12.1 adds (moonshot, moonshot_coding).
ProviderType = Literal[
    "anthropic",
    "azure",
    "baseten",
    "bedrock",
    "cerebras",
    "chatgpt_oauth",
    "deepseek",
    "fireworks",
    "google_ai",
    "google_vertex",
    "groq",
    "hugging-face",
    "letta",
    "lmstudio_openai",
    "minimax",
    "moonshot",
    "moonshot_coding",
    "mistral",
    "ollama",
    "openai",
    "together",
    "vllm",
    "sglang",
    "openrouter",
    "xai",
    "zai",
    "zai_coding",
]
# Endpoint types are open strings: the SDK's list is longer than Letta's and grows with each release.
_WIRE = ConfigDict(populate_by_name=True, extra="ignore", protected_namespaces=())


class LLMConfig(BaseModel):
    """How an agent reaches its chat model (deprecated on the wire in favour of `model` + `model_settings`)."""

    model_config = _WIRE

    model: str
    display_name: str | None = None
    model_endpoint_type: str
    model_endpoint: str | None = None
    provider_name: str | None = None
    provider_category: ProviderCategory | None = None
    model_wrapper: str | None = None
    context_window: int
    put_inner_thoughts_in_kwargs: bool | None = False
    handle: str | None = None
    temperature: float = 1.0
    max_tokens: int | None = None
    enable_reasoner: bool = True
    reasoning_effort: ReasoningEffort | None = None
    max_reasoning_tokens: int = 0
    effort: Effort | None = None
    frequency_penalty: float | None = None
    compatibility_type: Literal["gguf", "mlx"] | None = None
    verbosity: Verbosity | None = None
    tier: str | None = None
    parallel_tool_calls: bool | None = Field(default=False, json_schema_extra=_DEPRECATED)
    response_format: ResponseFormat | None = None
    strict: bool = False
    return_logprobs: bool = False
    top_logprobs: int | None = None
    return_token_ids: bool = False
    tool_call_parser: str | None = None

    @field_validator("put_inner_thoughts_in_kwargs", mode="before")
    @classmethod
    def _null_inner_thoughts_is_false(cls, value: bool | None) -> bool:
        # Letta turns an explicit null into False rather than storing it.
        return bool(value)

    @model_validator(mode="before")
    @classmethod
    def _retired_google_model(cls, values: Any) -> Any:
        # As Letta: a config on a model Google retired runs (and reads as) its successor.
        changes = redirect_retired_model(values) if isinstance(values, dict) else None
        return {**values, **changes} if changes else values


class EmbeddingConfig(BaseModel):
    """How an agent reaches its embedding model (deprecated on the wire in favour of `embedding`)."""

    model_config = _WIRE

    embedding_endpoint_type: str
    embedding_endpoint: str | None = None
    embedding_model: str
    embedding_dim: int
    embedding_chunk_size: int | None = 300
    handle: str | None = None
    batch_size: int = 32
    azure_endpoint: str | None = None
    azure_version: str | None = None
    azure_deployment: str | None = None


class Model(BaseModel):
    """One chat model of `GET /v1/models/`: the handle and provider, then the LLMConfig fields Letta still sends."""

    model_config = _WIRE

    handle: str | None = None
    name: str
    display_name: str | None = None
    provider_type: ProviderType
    provider_name: str | None = None
    model_type: Literal["llm"] = "llm"
    model: str = Field(json_schema_extra=_DEPRECATED)
    model_endpoint_type: str = Field(json_schema_extra=_DEPRECATED)
    model_endpoint: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    provider_category: ProviderCategory | None = Field(default=None, json_schema_extra=_DEPRECATED)
    model_wrapper: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    context_window: int = Field(json_schema_extra=_DEPRECATED)
    put_inner_thoughts_in_kwargs: bool | None = Field(default=True, json_schema_extra=_DEPRECATED)
    temperature: float = Field(default=0.7, json_schema_extra=_DEPRECATED)
    max_tokens: int | None = Field(default=None, json_schema_extra=_DEPRECATED)
    enable_reasoner: bool = Field(default=True, json_schema_extra=_DEPRECATED)
    reasoning_effort: ReasoningEffort | None = Field(default=None, json_schema_extra=_DEPRECATED)
    max_reasoning_tokens: int = Field(default=0, json_schema_extra=_DEPRECATED)
    effort: Effort | None = None
    frequency_penalty: float | None = Field(default=None, json_schema_extra=_DEPRECATED)
    compatibility_type: Literal["gguf", "mlx"] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    verbosity: Verbosity | None = Field(default=None, json_schema_extra=_DEPRECATED)
    tier: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    parallel_tool_calls: bool | None = Field(default=False, json_schema_extra=_DEPRECATED)
    response_format: ResponseFormat | None = None
    strict: bool = False
    return_logprobs: bool = False
    top_logprobs: int | None = None
    return_token_ids: bool = False
    tool_call_parser: str | None = None
    max_context_window: int

    @classmethod
    def from_llm_config(cls, config: LLMConfig, *, provider_type: str | None = None) -> "Model":
        """The listing entry for `config`; `provider_type` defaults to the config's endpoint type."""
        fields = config.model_dump(exclude={"display_name", "handle", "provider_name"})
        return cls.model_validate(
            {
                **fields,
                "handle": config.handle or f"{config.provider_name}/{config.model}",
                "name": config.model,
                "display_name": config.display_name or config.model,
                "provider_type": provider_type or config.model_endpoint_type,
                "provider_name": config.provider_name or config.model_endpoint_type,
                "max_context_window": config.context_window,
            }
        )


class EmbeddingModel(BaseModel):
    """One embedding model of `GET /v1/models/embedding`."""

    model_config = _WIRE

    handle: str | None = None
    name: str
    display_name: str
    provider_type: ProviderType
    provider_name: str
    model_type: Literal["embedding"] = "embedding"
    embedding_endpoint_type: str = Field(json_schema_extra=_DEPRECATED)
    embedding_endpoint: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    embedding_model: str = Field(json_schema_extra=_DEPRECATED)
    embedding_dim: int
    embedding_chunk_size: int | None = Field(default=300, json_schema_extra=_DEPRECATED)
    batch_size: int = Field(default=32, json_schema_extra=_DEPRECATED)
    azure_endpoint: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    azure_version: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    azure_deployment: str | None = Field(default=None, json_schema_extra=_DEPRECATED)

    @classmethod
    def from_embedding_config(
        cls, config: EmbeddingConfig, *, provider_type: str, provider_name: str
    ) -> "EmbeddingModel":
        """The listing entry for `config`, served by the named provider."""
        return cls.model_validate(
            {
                **config.model_dump(exclude={"handle"}),
                "handle": config.handle or f"{provider_name}/{config.embedding_model}",
                "name": config.embedding_model,
                "display_name": config.embedding_model,
                "provider_type": provider_type,
                "provider_name": provider_name,
            }
        )


def _strip(value: str | None) -> str | None:
    return value.strip() if isinstance(value, str) else value


class Provider(BaseModel):
    """A configured provider as returned by `/v1/providers`; credentials always serialize as null."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)

    id: str | None = None
    name: str
    provider_type: ProviderType
    provider_category: ProviderCategory
    api_key: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    base_url: str | None = None
    access_key: str | None = Field(default=None, json_schema_extra=_DEPRECATED)
    region: str | None = None
    api_version: str | None = None
    updated_at: datetime | None = None
    last_synced: datetime | None = None
    api_key_enc: str | None = None
    access_key_enc: str | None = None

    @field_serializer("api_key", "access_key", "api_key_enc", "access_key_enc")
    def _never_send_secrets(self, _value: str | None) -> None:
        return None


class ProviderCreate(BaseModel):
    """Body of `POST /v1/providers/`."""

    model_config = _WIRE

    name: str
    provider_type: ProviderType
    api_key: str
    access_key: str | None = None
    region: str | None = None
    base_url: str | None = None
    api_version: str | None = None

    _strip_keys = field_validator("api_key", "access_key", mode="before")(_strip)


class ProviderUpdate(BaseModel):
    """Body of `PATCH /v1/providers/{provider_id}`."""

    model_config = _WIRE

    api_key: str
    access_key: str | None = None
    region: str | None = None
    base_url: str | None = None
    api_version: str | None = None

    _strip_keys = field_validator("api_key", "access_key", mode="before")(_strip)


class ProviderCheck(BaseModel):
    """Body of `POST /v1/providers/check`."""

    model_config = _WIRE

    provider_type: ProviderType
    api_key: str
    access_key: str | None = None
    region: str | None = None
    base_url: str | None = None
    api_version: str | None = None

    _strip_keys = field_validator("api_key", "access_key", mode="before")(_strip)
