"""Per-provider `model_settings` and `response_format` wire models, as Letta 0.16.8 accepts and returns them.

`ModelSettings` is a union discriminated by `provider_type`. Letta 0.16.8 knows fifteen variants; newer
letta-client releases also send provider types it does not know (`moonshot`, `moonshot_coding`), so any other
`provider_type` lands in `OtherModelSettings`, which keeps every field it is given instead of answering 422.

Two conversions tie these to an agent's `llm_config`, as Letta does: `settings_from_llm_config` derives the
`model_settings` an AgentState shows, and `llm_params_from_settings` turns a request's `model_settings` into the
`llm_config` fields it overrides.
"""

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

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
    if not isinstance(provider_type, str):
        return None  # no usable tag (missing, or not a string): pydantic reports it (422), as Letta does
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


_ADAPTER: TypeAdapter[Any] = TypeAdapter(ModelSettings)
# Endpoint types whose settings carry only the shared fields plus temperature.
_PLAIN = {
    "azure": AzureModelSettings,
    "xai": XAIModelSettings,
    "groq": GroqModelSettings,
    "deepseek": DeepseekModelSettings,
    "together": TogetherModelSettings,
    "bedrock": BedrockModelSettings,
    "openrouter": OpenRouterModelSettings,
    "baseten": BasetenModelSettings,
}


def _thinking(enabled: bool) -> Literal["enabled", "disabled"]:
    return "enabled" if enabled else "disabled"


def settings_from_llm_config(llm_config: Mapping[str, Any]) -> dict[str, Any]:
    """The `model_settings` Letta shows for an agent with this `llm_config` (wire dict).

    `parallel_tool_calls` is never read from the config, so it shows its default (true) whatever the config
    says; Letta 0.16.8 does the same.
    """
    kind = llm_config.get("model_endpoint_type") or ""
    max_tokens = llm_config.get("max_tokens")
    temperature = llm_config.get("temperature", 0.7)
    reasoning_budget = llm_config.get("max_reasoning_tokens") or 0
    settings: BaseModel
    if kind == "openai":
        effort = llm_config.get("reasoning_effort") or "minimal"
        sglang = (llm_config.get("handle") or "").startswith("sglang/") or "sglang" in (
            llm_config.get("provider_name") or ""
        ).lower()
        common = {
            "max_output_tokens": max_tokens or 4096,
            "temperature": temperature,
            "reasoning": OpenAIReasoning(reasoning_effort=effort),
            "strict": llm_config.get("strict", False),
        }
        if sglang:
            settings = SGLangModelSettings(**common, tool_call_parser=llm_config.get("tool_call_parser"))
        else:
            settings = OpenAIModelSettings(**common)
    elif kind in ("anthropic", "minimax"):
        settings = AnthropicModelSettings(
            max_output_tokens=max_tokens or 4096,
            temperature=temperature,
            thinking=AnthropicThinking(
                type=_thinking(bool(llm_config.get("enable_reasoner", True))), budget_tokens=reasoning_budget or 1024
            ),
            verbosity=llm_config.get("verbosity"),
            strict=llm_config.get("strict", False),
            effort=llm_config.get("effort") if kind == "anthropic" else None,
        )
    elif kind in ("google_ai", "google_vertex"):
        cls = GoogleAIModelSettings if kind == "google_ai" else GoogleVertexModelSettings
        settings = cls(
            max_output_tokens=max_tokens or 65536,
            temperature=temperature,
            thinking_config=GeminiThinkingConfig(
                include_thoughts=reasoning_budget > 0, thinking_budget=reasoning_budget or 1024
            ),
        )
    elif kind in ("zai", "zai_coding"):
        settings = ZAIModelSettings(
            max_output_tokens=max_tokens or 4096,
            temperature=temperature,
            thinking=ZAIThinking(type=_thinking(bool(llm_config.get("enable_reasoner", True)))),
        )
    elif kind == "chatgpt_oauth":
        settings = ChatGPTOAuthModelSettings(
            max_output_tokens=max_tokens or 4096,
            temperature=temperature,
            reasoning=ChatGPTOAuthReasoning(reasoning_effort=llm_config.get("reasoning_effort") or "medium"),
        )
    elif kind in _PLAIN:
        settings = _PLAIN[kind](max_output_tokens=max_tokens or 4096, temperature=temperature)
    else:
        # Letta falls back to the bare base settings; we keep the endpoint type so the union can still tag it.
        settings = OtherModelSettings(provider_type=kind, max_output_tokens=max_tokens or 4096, temperature=temperature)
    return settings.model_dump(mode="json")


def _response_format(settings: BaseModel) -> Any:
    value = getattr(settings, "response_format", None)
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def llm_params_from_settings(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The `llm_config` fields a request's `model_settings` overrides (Letta's legacy mapping).

    Unset fields take their model defaults, as in Letta, except `max_output_tokens`: when the request leaves it
    out, the model's own `max_tokens` is kept.
    """
    settings = _ADAPTER.validate_python(dict(raw))
    params: dict[str, Any] = {
        "temperature": settings.temperature,
        "max_tokens": settings.max_output_tokens,
        "parallel_tool_calls": settings.parallel_tool_calls,
    }
    if isinstance(settings, OpenAIModelSettings | SGLangModelSettings):
        params |= {
            "reasoning_effort": settings.reasoning.reasoning_effort,
            "response_format": _response_format(settings),
            "strict": settings.strict,
        }
        if isinstance(settings, SGLangModelSettings):
            params["tool_call_parser"] = settings.tool_call_parser
    elif isinstance(settings, AnthropicModelSettings):
        params |= {
            "max_reasoning_tokens": settings.thinking.budget_tokens,
            "verbosity": settings.verbosity,
            "effort": settings.effort,
            "response_format": _response_format(settings),
            "strict": settings.strict,
        }
    elif isinstance(settings, GoogleAIModelSettings | GoogleVertexModelSettings):
        tc = settings.thinking_config
        params |= {"max_reasoning_tokens": tc.thinking_budget if tc.include_thoughts else 0, "strict": False}
    elif isinstance(settings, ChatGPTOAuthModelSettings):
        params["reasoning_effort"] = settings.reasoning.reasoning_effort
    elif isinstance(settings, BasetenModelSettings):
        params["strict"] = True
    elif not isinstance(settings, OtherModelSettings):
        params |= {"response_format": _response_format(settings), "strict": False}
    if "max_output_tokens" not in raw:
        params.pop("max_tokens")
    return params
