"""The summarizer: an agent's `compaction_settings`, the transcript of the evicted rows, and the summary call.

`compaction_settings` (stored on the agent, or given to `/summarize`) choose the mode (`sliding_window` keeps the
newest turns, `all` summarizes every complete turn), how much a sliding window evicts
(`sliding_window_percentage`), the summarizer's model (a handle; the agent's own model when unset), its
instructions (`prompt`) and the longest summary kept (`clip_chars`). A failed or empty summary raises: the caller
then leaves the context as it was, never drops rows without a summary.
"""

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from memlet.errors import BadRequestError
from memlet.llm.chat_format import to_openai_messages
from memlet.llm.client import ANTHROPIC_ENDPOINTS, LLMClient
from memlet.llm.errors import LLMEmptyResponseError
from memlet.llm.model_quirks import is_reasoning_model, logprobs_params, supports_temperature
from memlet.llm.tokens import count_tokens
from memlet.llm.types import LETTA_V1_AGENT, ChatRequest
from memlet.loop.chat_request import endpoint_messages, provider_params, system_role_for
from memlet.loop.headroom import counting_margin
from memlet.messages.packing import format_local_time
from memlet.prompt.prompts import SUMMARIZER_INSTRUCTIONS

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 512
# Put before the transcript when `prompt_acknowledgement` is on, as the summarizer's own answer to its instructions.
SUMMARY_ACKNOWLEDGEMENT = "Understood. Send me the messages and I will answer with their summary and nothing else."
TRUNCATION_SUFFIX = "... [summary truncated to fit]"
SYSTEM_PROMPT_OVERFLOW = (
    "Compaction failed because the system prompt is too large for this model's context window. Reduce system "
    "instructions, memory blocks, or tools, or use a model with a larger context window."
)


class ContextOverflowError(BadRequestError):
    """Even with an empty buffer the prompt does not fit the window (stop reason
    `context_window_overflow_in_system_prompt`, a 400 as in Letta)."""

    def __init__(self, tokens: int, window: int) -> None:
        super().__init__(
            f"{SYSTEM_PROMPT_OVERFLOW} (the system prompt, tools and new input take {tokens} tokens; "
            f"the context window is {window})"
        )


class CompactionFailedError(BadRequestError):
    """Compaction could not bring the prompt inside the window (the current turn alone is too large)."""


@dataclass(frozen=True)
class SummarizerSettings:
    """The `compaction_settings` fields memlet honours (self_compact_* modes run as their plain counterparts);
    `max_tokens` and `temperature` come from its `model_settings` (`max_output_tokens`, `temperature`)."""

    mode: str = "sliding_window"
    sliding_window_percentage: float = 0.3
    model: str | None = None
    clip_chars: int | None = 50_000
    prompt: str | None = None
    acknowledgement: bool = False
    max_tokens: int | None = None
    temperature: float | None = None

    @classmethod
    def from_stored(cls, *layers: dict[str, Any] | None) -> Self:
        """Merge stored settings, later layers winning (agent's settings, then a request's)."""
        merged: dict[str, Any] = {}
        for layer in layers:
            merged.update({k: v for k, v in (layer or {}).items() if v is not None or k == "clip_chars"})
        mode = str(merged.get("mode") or "sliding_window")
        pct = float(merged.get("sliding_window_percentage") or 0.3)
        model_settings = merged.get("model_settings")
        model_settings = model_settings if isinstance(model_settings, dict) else {}
        max_tokens, temperature = model_settings.get("max_output_tokens"), model_settings.get("temperature")
        return cls(
            mode="all" if mode.endswith("all") else "sliding_window",
            sliding_window_percentage=min(max(pct, 0.0), 1.0),
            model=merged.get("model") or None,
            clip_chars=merged.get("clip_chars", 50_000),
            prompt=merged.get("prompt") or None,
            acknowledgement=bool(merged.get("prompt_acknowledgement")),
            max_tokens=int(max_tokens) if isinstance(max_tokens, int | float) and max_tokens > 0 else None,
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
        )


def summarizer_llm_config(agent_config: dict[str, Any], handle: str | None) -> dict[str, Any]:
    """The llm_config for the summary call: the agent's, with the model of `handle` when it names another model
    of the same provider (a handle of another provider falls back to the agent's model, as Letta falls back).

    Reasoning is off and thoughts are not asked for as a tool argument, as Letta's summarizer sets its config: the
    request still carries the endpoint's other fields (`memlet.loop.chat_request.provider_params`)."""
    config = {**agent_config, "enable_reasoner": False, "put_inner_thoughts_in_kwargs": False}
    if not handle or handle == agent_config.get("handle") or "/" not in handle:
        return config
    provider, model = handle.split("/", 1)
    own = str(agent_config.get("handle") or "")
    if own and own.split("/", 1)[0] != provider:
        log.warning("summarizer model %s is not served by the agent's provider; using the agent's model", handle)
        return config
    return {**config, "model": model, "handle": handle}


def summary_max_tokens(window: int, configured: int | None = None) -> int:
    """The completion limit of a summary call: the summarizer's `max_output_tokens` when set (at most a quarter of
    the window), else memlet's own small limit."""
    if configured is not None:
        return min(configured, max(window // 4, 32))
    return min(SUMMARY_MAX_TOKENS, max(window // 8, 32))


def transcript(rows: Sequence[Any], agent_type: str) -> str:
    """The evicted rows as plain `role: text` lines, tool calls included."""
    lines = []
    for message in to_openai_messages("", rows, agent_type)[1:]:
        content = message.get("content") or ""
        text = content if isinstance(content, str) else " ".join(p.get("text", "[image]") for p in content)
        for call in message.get("tool_calls") or []:
            text += f" [called {call['function']['name']}({call['function']['arguments']})]"
        lines.append(f"{message['role']}: {text}")
    return "\n".join(lines)


def summary_temperature(config: Mapping[str, Any], settings: SummarizerSettings) -> float | None:
    """The summarizer's temperature (its `model_settings`', else the model config's); OpenAI's reasoning models
    take only 1.0."""
    model = str(config.get("model") or "")
    if config.get("model_endpoint_type") == "openai" and is_reasoning_model(model) and not supports_temperature(model):
        return 1.0
    return settings.temperature if settings.temperature is not None else config.get("temperature")


def summary_request(
    config: Mapping[str, Any],
    messages: list[dict[str, Any]],
    max_tokens: int,
    temperature: float | None,
    user: str | None,
) -> ChatRequest:
    """The summary call's request, with the per-provider fields a step's request carries for the same config (the
    `user`, thinking switches, GLM-5's `stop`, blank text filled, logprobs, ...), built as Letta's summarizer builds it: as a
    letta_v1 agent's request without tools; streamed from Anthropic, as Letta streams it there. Being a letta_v1
    agent's, an OpenAI reasoning model's goes to the Responses API (`uses_responses_api`), unstreamed, with the
    config's reasoning effort and a detailed reasoning summary, as Letta's summarizer sends it."""
    system, *rest = messages
    messages = [{**system, "role": system_role_for(config)}, *rest]
    return ChatRequest(
        model=str(config.get("model")),
        messages=endpoint_messages(config, messages) or messages,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=config.get("model_endpoint_type") in ANTHROPIC_ENDPOINTS - {"minimax"},
        user=user,
        agent_type=LETTA_V1_AGENT,
        **provider_params(config),
        **logprobs_params(config, LETTA_V1_AGENT),
    )


async def summarize(
    llm: LLMClient,
    config: Mapping[str, Any],
    settings: SummarizerSettings,
    text: str,
    window: int,
    user: str | None = None,
) -> str:
    """One summary call to the model of `config` (from `summarizer_llm_config`) with the settings' instructions
    (after them, with `prompt_acknowledgement`, the summarizer's acknowledgement); the answer clipped to
    `clip_chars`. `user`: the requesting user's id.

    Raises what the LLM call raises, and LLMEmptyResponseError for an empty answer.
    """
    instructions = settings.prompt or SUMMARIZER_INSTRUCTIONS
    head = [{"role": "system", "content": instructions}]
    if settings.acknowledgement:
        head.append({"role": "assistant", "content": SUMMARY_ACKNOWLEDGEMENT})
    max_tokens = summary_max_tokens(window, settings.max_tokens)
    fixed = sum(count_tokens(str(m["content"])) for m in head)
    budget = window - fixed - max_tokens - counting_margin(window) - 64
    if budget <= 0:
        raise CompactionFailedError("The summarizer's instructions leave no room in the context window.")
    while text and count_tokens(text) > budget:
        # The summarizer's own request must fit too: keep the most recent part of the evicted history.
        text = text[len(text) // 4 :]
    messages = [*head, {"role": "user", "content": text}]
    result = await llm.chat(summary_request(config, messages, max_tokens, summary_temperature(config, settings), user))
    summary = (result.content or "").strip()
    if not summary:
        raise LLMEmptyResponseError("the summarizer returned an empty summary")
    if settings.clip_chars is not None and len(summary) > settings.clip_chars:
        summary = summary[: settings.clip_chars] + TRUNCATION_SUFFIX
    return summary


def summary_text(summary: str, mode: str, stats: dict[str, Any] | None, timezone: str | None) -> str:
    """The stored summary message, a packed system alert, worded as Letta words it: a sliding window's names how
    many messages went (when the compaction has stats: the loop's do, a manual one's do not), `all`'s does not.
    Letta's compaction stats ride along when there are any."""
    if mode != "sliding_window":
        note = "Note: prior messages have been hidden from view due to conversation memory constraints."
    elif stats is not None:
        hidden = stats["messages_count_before"] - stats["messages_count_after"]
        note = (
            f"Note: {hidden} messages from the beginning of the conversation have been hidden from view due to "
            "memory constraints."
        )
    else:
        note = (
            "Note: prior messages from the beginning of the conversation have been hidden from view due to "
            "conversation memory constraints."
        )
    message = f"{note}\nThe following is a summary of the previous messages:\n {summary}"
    packed: dict[str, Any] = {"type": "system_alert", "message": message, "time": format_local_time(timezone)}
    if stats is not None:
        packed["compaction_stats"] = stats
    return json.dumps(packed)
