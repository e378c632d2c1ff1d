"""Per-provider `model_settings` and `response_format` wire models, as Letta 0.16.8 accepts and returns them.

`ModelSettings` is a union discriminated by `provider_type`. Letta 0.16.8 knows fifteen variants; newer
letta-client releases also send provider types it does not know (`moonshot`, `moonshot_coding`), so any other
`provider_type` lands in `OtherModelSettings`, which keeps every field it is given instead of answering 422.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
# letta-client 1.12.1 also sends "xhigh", which 0.16.8's own Literal lacks; accept it rather than 422.
Effort = Literal["low", "medium", "high", "xhigh", "max"]
Verbosity = Literal["low", "medium", "high"]


class TextResponseFormat(BaseModel):
    """Plain text output."""

    type: Literal["text"] = "text"


class JsonSchemaResponseFormat(BaseModel):
    """Structured output that must match `json_schema`."""

    type: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any]


class JsonObjectResponseFormat(BaseModel):
    """Any JSON object."""

    type: Literal["json_object"] = "json_object"


ResponseFormat = Annotated[
    TextResponseFormat | JsonSchemaResponseFormat | JsonObjectResponseFormat,
    Field(discriminator="type"),
]


class OpenAIReasoning(BaseModel):
    reasoning_effort: ReasoningEffort = "minimal"


class AnthropicThinking(BaseModel):
    type: Literal["enabled", "disabled"] = "enabled"
    budget_tokens: int = 1024


class GeminiThinkingConfig(BaseModel):
    include_thoughts: bool = True
    thinking_budget: int = 1024


class ZAIThinking(BaseModel):
    type: Literal["enabled", "disabled"] = "enabled"
    clear_thinking: bool = False


class ChatGPTOAuthReasoning(BaseModel):
    reasoning_effort: Literal["none", "low", "medium", "high", "xhigh"] = "medium"


class _ModelSettingsBase(BaseModel):
    """The two fields every provider variant shares (Letta's `ModelSettings`)."""

    model_config = ConfigDict(extra="ignore")

    max_output_tokens: int = 4096
    parallel_tool_calls: bool = True


class OpenAIModelSettings(_ModelSettingsBase):
    provider_type: Literal["openai"] = "openai"
    temperature: float = 0.7
    reasoning: OpenAIReasoning = Field(default_factory=lambda: OpenAIReasoning(reasoning_effort="high"))
    response_format: ResponseFormat | None = None
    strict: bool = True


class SGLangModelSettings(_ModelSettingsBase):
    provider_type: Literal["sglang"] = "sglang"
    temperature: float = 0.7
    reasoning: OpenAIReasoning = Field(default_factory=lambda: OpenAIReasoning(reasoning_effort="high"))
    response_format: ResponseFormat | None = None
    strict: bool = True
    tool_call_parser: str | None = None


class AnthropicModelSettings(_ModelSettingsBase):
    provider_type: Literal["anthropic"] = "anthropic"
    temperature: float = 1.0
    thinking: AnthropicThinking = Field(default_factory=AnthropicThinking)
    response_format: ResponseFormat | None = None
    verbosity: Verbosity | None = None
    effort: Effort | None = None
    strict: bool = False


class GoogleAIModelSettings(_ModelSettingsBase):
    provider_type: Literal["google_ai"] = "google_ai"
    max_output_tokens: int = 65536
    temperature: float = 0.7
    thinking_config: GeminiThinkingConfig = Field(default_factory=GeminiThinkingConfig)
    response_schema: ResponseFormat | None = None


class GoogleVertexModelSettings(_ModelSettingsBase):
    provider_type: Literal["google_vertex"] = "google_vertex"
    max_output_tokens: int = 65536
    temperature: float = 0.7
    thinking_config: GeminiThinkingConfig = Field(default_factory=GeminiThinkingConfig)
    response_schema: ResponseFormat | None = None


class AzureModelSettings(_ModelSettingsBase):
    provider_type: Literal["azure"] = "azure"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class XAIModelSettings(_ModelSettingsBase):
    provider_type: Literal["xai"] = "xai"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class ZAIModelSettings(_ModelSettingsBase):
    provider_type: Literal["zai"] = "zai"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None
    thinking: ZAIThinking = Field(default_factory=ZAIThinking)


class GroqModelSettings(_ModelSettingsBase):
    provider_type: Literal["groq"] = "groq"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class DeepseekModelSettings(_ModelSettingsBase):
    provider_type: Literal["deepseek"] = "deepseek"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class TogetherModelSettings(_ModelSettingsBase):
    provider_type: Literal["together"] = "together"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class BedrockModelSettings(_ModelSettingsBase):
    provider_type: Literal["bedrock"] = "bedrock"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class BasetenModelSettings(_ModelSettingsBase):
    provider_type: Literal["baseten"] = "baseten"
    temperature: float = 0.7


class OpenRouterModelSettings(_ModelSettingsBase):
    provider_type: Literal["openrouter"] = "openrouter"
    temperature: float = 0.7
    response_format: ResponseFormat | None = None


class ChatGPTOAuthModelSettings(_ModelSettingsBase):
    provider_type: Literal["chatgpt_oauth"] = "chatgpt_oauth"
    temperature: float = 0.7
    reasoning: ChatGPTOAuthReasoning = Field(default_factory=ChatGPTOAuthReasoning)


class OtherModelSettings(_ModelSettingsBase):
    """Settings for a provider type Letta 0.16.8 does not model; every given field is kept and echoed back."""

    model_config = ConfigDict(extra="allow")

    provider_type: str
    temperature: float = 0.7


_VARIANTS: dict[str, type[_ModelSettingsBase]] = {
    "openai": OpenAIModelSettings,
    "sglang": SGLangModelSettings,
    "anthropic": AnthropicModelSettings,
    "google_ai": GoogleAIModelSettings,
    "google_vertex": GoogleVertexModelSettings,
    "azure": AzureModelSettings,
    "xai": XAIModelSettings,
    "zai": ZAIModelSettings,
    "groq": GroqModelSettings,
    "deepseek": DeepseekModelSettings,
    "together": TogetherModelSettings,
    "bedrock": BedrockModelSettings,
    "baseten": BasetenModelSettings,
    "openrouter": OpenRouterModelSettings,
    "chatgpt_oauth": ChatGPTOAuthModelSettings,
}


def _model_settings_tag(value: Any) -> str | None:
    """The union member for a raw dict or a model: its provider type, or "other" when Letta has no variant."""
    provider_type = value.get("provider_type") if isinstance(value, dict) else getattr(value, "provider_type", None)
    if provider_type is None:
        return None  # no tag: pydantic reports the missing discriminator, as Letta does
    return provider_type if provider_type in _VARIANTS else "other"


ModelSettings = Annotated[
    Annotated[OpenAIModelSettings, Tag("openai")]
    | Annotated[SGLangModelSettings, Tag("sglang")]
    | Annotated[AnthropicModelSettings, Tag("anthropic")]
    | Annotated[GoogleAIModelSettings, Tag("google_ai")]
    | Annotated[GoogleVertexModelSettings, Tag("google_vertex")]
    | Annotated[AzureModelSettings, Tag("azure")]
    | Annotated[XAIModelSettings, Tag("xai")]
    | Annotated[ZAIModelSettings, Tag("zai")]
    | Annotated[GroqModelSettings, Tag("groq")]
    | Annotated[DeepseekModelSettings, Tag("deepseek")]
    | Annotated[TogetherModelSettings, Tag("together")]
    | Annotated[BedrockModelSettings, Tag("bedrock")]
    | Annotated[BasetenModelSettings, Tag("baseten")]
    | Annotated[OpenRouterModelSettings, Tag("openrouter")]
    | Annotated[ChatGPTOAuthModelSettings, Tag("chatgpt_oauth")]
    | Annotated[OtherModelSettings, Tag("other")],
    Discriminator(_model_settings_tag),
]


def model_settings_class(provider_type: str) -> type[_ModelSettingsBase]:
    """The settings model Letta uses for `provider_type` (`OtherModelSettings` when it has none)."""
    return _VARIANTS.get(provider_type, OtherModelSettings)
