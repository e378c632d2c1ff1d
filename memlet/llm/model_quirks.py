"""What each model and provider accepts in a chat request, decided from the agent's llm_config alone (pure).

The rules follow Letta 0.16.8's OpenAI client: OpenAI's reasoning models (o1, o3, o4, gpt-5) take the
`developer` role, `reasoning_effort` and (gpt-5) `verbosity`, but neither a custom temperature nor parallel tool
calls; some OpenAI-compatible servers (vLLM, Nebius, MLX) reject `tool_choice: "required"`.
"""

import copy
from collections.abc import Mapping
from typing import Any

from memlet.llm.types import LETTA_V1_AGENT

_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# Anthropic models that accept `strict` tools (structured outputs), as Letta lists them.
_ANTHROPIC_STRICT = ("sonnet-4-5", "opus-4-1", "opus-4-5", "haiku-4-5")
# OpenAI-compatible endpoints whose tool schemas never carry `strict` (Letta's clients for them turn it off).
_NO_STRICT_ENDPOINTS = frozenset({"deepseek", "fireworks", "minimax", "xai"})
LETTA_ENDPOINT = "https://inference.letta.com/v1"  # Letta's own inference endpoint
# An OpenAI model named with this suffix ("gpt-5.4-fast") is the model itself on OpenAI's priority service tier.
FAST_SUFFIX = "-fast"


def priority_tier_model(endpoint_type: str, model: str) -> str | None:
    """The model an OpenAI `-fast` name stands for (sent with `service_tier: "priority"`), else None."""
    if endpoint_type != "openai" or not model.endswith(FAST_SUFFIX):
        return None
    return model.removesuffix(FAST_SUFFIX)


def takes_sampling_params(endpoint_type: str | None, model: str) -> bool:
    """Whether a request carries `temperature` and `frequency_penalty`: not to DeepSeek's reasoners (a model
    named with "reasoner"), which ignore or refuse them, as Letta's DeepSeek client leaves them out."""
    return not (endpoint_type == "deepseek" and "reasoner" in model)


def is_reasoning_model(model: str) -> bool:
    """OpenAI's reasoning models, by name."""
    return model.startswith(_REASONING_PREFIXES)


def accepts_developer_role(model: str) -> bool:
    """Whether the system prompt goes out with the `developer` role (o1-mini still wants `system`)."""
    return (is_reasoning_model(model) and "o1-mini" not in model) or "o1-preview" in model


def supports_temperature(model: str) -> bool:
    """Reasoning models refuse any temperature but the default (1.0)."""
    return not is_reasoning_model(model)


def supports_parallel_tool_calls(model: str) -> bool:
    return not is_reasoning_model(model)


def supports_verbosity(model: str) -> bool:
    return model.startswith("gpt-5")


def prompt_cache_retention(llm_config: Mapping[str, Any]) -> str | None:
    """`"24h"` for models that keep OpenAI's prompt cache that long (gpt-4.1 and gpt-5, but gpt-5-mini), on
    OpenAI itself: not OpenRouter, not Letta's inference endpoint, not a provider named other than `openai`."""
    endpoint = str(llm_config.get("model_endpoint") or "")
    provider = llm_config.get("provider_name")
    if llm_config.get("model_endpoint_type") != "openai" or provider not in (None, "openai"):
        return None
    if _is_openrouter(llm_config) or endpoint.rstrip("/") == LETTA_ENDPOINT:
        return None
    model = str(llm_config.get("model") or "").split("/", 1)[-1]
    extended = model == "gpt-4.1" or (model.startswith("gpt-5") and model != "gpt-5-mini")
    return "24h" if extended else None


def requires_auto_tool_choice(llm_config: Mapping[str, Any]) -> bool:
    """Providers that reject `tool_choice: "required"` (vLLM, Nebius, MLX servers)."""
    endpoint = str(llm_config.get("model_endpoint") or "")
    handle = str(llm_config.get("handle") or "")
    return (
        "nebius.com" in endpoint
        or "vllm" in handle
        or llm_config.get("model_endpoint_type") == "vllm"
        or llm_config.get("compatibility_type") == "mlx"
    )


def supports_structured_output(llm_config: Mapping[str, Any]) -> bool:
    """Whether tool schemas may carry `strict: true` for this endpoint."""
    model = str(llm_config.get("model") or "").lower()
    endpoint_type = llm_config.get("model_endpoint_type")
    if endpoint_type == "anthropic":
        return any(name in model for name in _ANTHROPIC_STRICT)
    if endpoint_type in _NO_STRICT_ENDPOINTS:
        return False
    return "nebius.com" not in str(llm_config.get("model_endpoint") or "")


def parallel_tool_calls_enabled(llm_config: Mapping[str, Any], *, has_tool_rules: bool) -> bool:
    """Whether the model may return several calls at once: asked for in the config, taken by the model, and
    no tool rule (other than requires_approval) constrains the order of calls."""
    model = str(llm_config.get("model") or "")
    wanted = bool(llm_config.get("parallel_tool_calls"))
    if llm_config.get("model_endpoint_type") in ("anthropic", "minimax"):
        return wanted and not has_tool_rules
    return wanted and not has_tool_rules and supports_parallel_tool_calls(model)


def is_zai_reasoner(model: str) -> bool:
    """Z.ai's GLM models that reason (GLM-4.5 on), whose thinking can be switched on and off."""
    return model.startswith(("glm-4.5", "glm-4.6", "glm-4.7", "glm-5"))


# GLM-5's turn markers: it may go on to write the next turn after its own.
GLM5_STOP = ("<|user|>", "<|assistant|>", "<|observation|>")
# OpenRouter's hosts of GLM-5 that Letta leaves out (quantized, degraded, or failing tool calls).
GLM5_OPENROUTER_IGNORED = ("deepinfra/fp4", "ambient/fp8", "io-net/fp8", "phala", "siliconflow/fp8")
BASETEN_KIMI = "moonshotai/Kimi-K2.5"


def _is_openrouter(llm_config: Mapping[str, Any]) -> bool:
    return (
        "openrouter.ai" in str(llm_config.get("model_endpoint") or "")
        or llm_config.get("provider_name") == "openrouter"
        or llm_config.get("model_endpoint_type") == "openrouter"
    )


def extra_body(llm_config: Mapping[str, Any]) -> dict[str, Any] | None:
    """Provider-specific request fields, as Letta's clients add them: Z.ai's GLM reasoners (on Z.ai or Fireworks)
    get thinking switched on (kept between steps) or off by `enable_reasoner`; OpenRouter gets its `reasoning`
    settings from the config's effort or budget while `enable_reasoner` holds (true unless set); a GLM-5 model
    (any OpenAI-compatible endpoint) gets `stop` at its turn markers, so it never writes the next turn, and elsewhere
    than Z.ai's switch and OpenRouter (where some hosts are left out for it) its thinking asked for through
    `chat_template_args` while `enable_reasoner` holds, as Baseten's Kimi K2.5 gets it."""
    model = str(llm_config.get("model") or "")
    endpoint_type = llm_config.get("model_endpoint_type")
    reasoner = llm_config.get("enable_reasoner", True) is not False
    body: dict[str, Any] = {}
    glm5 = model.lower().endswith("glm-5")
    if glm5:
        body["stop"] = list(GLM5_STOP)
    if endpoint_type in ("zai", "fireworks") and is_zai_reasoner(model):
        body["thinking"] = {"type": "enabled", "clear_thinking": False} if reasoner else {"type": "disabled"}
    elif _is_openrouter(llm_config) and reasoner:
        reasoning: dict[str, Any] = {}
        if llm_config.get("reasoning_effort"):
            reasoning["effort"] = llm_config["reasoning_effort"]
        if (budget := llm_config.get("max_reasoning_tokens")) and budget > 0:
            reasoning["max_tokens"] = budget
        body["reasoning"] = reasoning or {"enabled": True}
    if _is_openrouter(llm_config) and glm5:
        body["provider"] = {"ignore": list(GLM5_OPENROUTER_IGNORED)}
    elif "thinking" not in body and reasoner and (glm5 or (endpoint_type, model) == ("baseten", BASETEN_KIMI)):
        body["chat_template_args"] = {"enable_thinking": True}  # these models think only when asked this way
    return body or None


def logprobs_params(llm_config: Mapping[str, Any], agent_type: str | None) -> dict[str, Any]:
    """`logprobs` (and `top_logprobs` when set) for a config with `return_logprobs`, as Letta's OpenAI client asks
    for them; not where Letta leaves them out: Groq (its client sends `logprobs: false`), DeepSeek's reasoners,
    and a letta_v1 agent on an OpenAI reasoning model (Letta sends those through the Responses API, without them);
    nor to Anthropic's messages API, which has no such parameter."""
    if not llm_config.get("return_logprobs"):
        return {}
    model = str(llm_config.get("model") or "")
    endpoint_type = llm_config.get("model_endpoint_type")
    if endpoint_type in ("groq", "anthropic", "minimax") or (endpoint_type == "deepseek" and "reasoner" in model):
        return {}
    if is_reasoning_model(model) and agent_type == LETTA_V1_AGENT:
        return {}
    top = llm_config.get("top_logprobs")
    return {"logprobs": True} if top is None else {"logprobs": True, "top_logprobs": top}


def with_null_content_as_empty(
    llm_config: Mapping[str, Any], messages: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """`messages` with each null content made "" for the gpt-oss models, which refuse null content, as Letta's
    OpenAI client sends them (None: no change)."""
    if "gpt-oss" not in str(llm_config.get("model") or "") or all(m.get("content") is not None for m in messages):
        return None
    return [m if m.get("content") is not None else {**m, "content": ""} for m in messages]


# Endpoints that refuse an empty text (Letta's clients for them send "." in its place).
_FILLED_EMPTY_TEXT_ENDPOINTS = frozenset({"zai", "fireworks", "baseten"})
EMPTY_TEXT_FILLER = "."


def with_empty_text_filled(
    llm_config: Mapping[str, Any], messages: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """`messages` as Z.ai, Fireworks and Baseten take them (None: no change): a blank text, whatever the role,
    becomes ".", except an assistant message's beside its tool calls, which becomes null; blank text parts too."""
    if llm_config.get("model_endpoint_type") not in _FILLED_EMPTY_TEXT_ENDPOINTS:
        return None
    out: list[dict[str, Any]] = []
    changed = False
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and not content.strip():
            blank_beside_calls = message.get("role") == "assistant" and message.get("tool_calls")
            message = {**message, "content": None if blank_beside_calls else EMPTY_TEXT_FILLER}
            changed = True
        elif isinstance(content, list) and any(_blank_text_part(p) for p in content):
            parts = [{**p, "text": EMPTY_TEXT_FILLER} if _blank_text_part(p) else p for p in content]
            message = {**message, "content": parts}
            changed = True
        out.append(message)
    return out if changed else None


def _blank_text_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "text" and not str(part.get("text") or "").strip()


def tool_choice_for(llm_config: Mapping[str, Any], choice: str | dict[str, Any]) -> str | dict[str, Any]:
    """`choice` as the endpoint takes it: Groq takes only the named choices, so a call forced by name asks for
    `required` (only that tool is offered then)."""
    if isinstance(choice, dict) and llm_config.get("model_endpoint_type") == "groq":
        return "required"
    return choice


def response_format_param(response_format: Any) -> dict[str, Any] | None:
    """The chat.completions `response_format` for a stored one (text, json_object or json_schema)."""
    if not isinstance(response_format, Mapping) or not response_format.get("type"):
        return None
    if response_format["type"] == "json_schema":
        return {"type": "json_schema", "json_schema": response_format.get("json_schema")}
    return {"type": str(response_format["type"])}


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A function schema in strict mode, as Letta's enable_strict_mode makes it: `strict: true`, no extra
    properties, every parameter required.

    Parameters that were optional stay optional by also accepting null (a `null` type, an `anyOf` member or an
    `anyOf` around a `$ref`; an untyped one becomes `null`, as in Letta). Nested objects are closed and require all
    their properties, but theirs are not made nullable: Letta sends them as they are.
    """
    out = copy.deepcopy(schema)
    out["strict"] = True
    params = out.get("parameters")
    if isinstance(params, dict) and params.get("type") == "object":
        params["additionalProperties"] = False
        properties: dict[str, Any] = params.get("properties") or {}
        required = set(params.get("required") or [])
        for name, prop in properties.items():
            if isinstance(prop, dict):
                _strict_nested(prop)
                if name not in required:
                    _nullable(prop)
        params["properties"] = properties
        params["required"] = list(properties)
    return out


def _strict_nested(prop: dict[str, Any]) -> None:
    options = prop.get("anyOf")
    if options is not None:  # Letta treats only the members of a union
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict):
                _strict_nested(option)
        return
    kind = prop.get("type")
    properties = prop.get("properties")
    if kind == "object" and isinstance(properties, dict):
        for value in properties.values():
            if isinstance(value, dict):
                _strict_nested(value)
        prop["additionalProperties"] = False
        prop["required"] = list(properties)
    elif kind == "array" and isinstance(prop.get("items"), dict):
        _strict_nested(prop["items"])


def _nullable(prop: dict[str, Any]) -> None:
    kind = prop.get("type")
    if "type" in prop:
        if isinstance(kind, list) and "null" not in kind:
            kind.append("null")
        elif isinstance(kind, str) and kind != "null":
            prop["type"] = [kind, "null"]
    elif isinstance(prop.get("anyOf"), list):
        if not any(isinstance(o, dict) and o.get("type") == "null" for o in prop["anyOf"]):
            prop["anyOf"].append({"type": "null"})
    elif "$ref" in prop:
        prop["anyOf"] = [{"$ref": prop.pop("$ref")}, {"type": "null"}]
    else:
        prop["type"] = "null"
