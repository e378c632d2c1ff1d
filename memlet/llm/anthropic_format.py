"""The loop's OpenAI-style chat request rendered as an Anthropic messages API body.

- The first system message becomes ``system`` (text blocks, the last one marked ``cache_control`` so the prompt
  is cached, as are the tools and the final block of the last message, so the conversation is cached as it
  grows); later system messages become user text (``<event>SYSTEM ALERT: ...</event>``, as Letta wraps them),
  as Anthropic has no mid-conversation system role.
- Assistant messages become content blocks: their signed thinking blocks first (``thinking_blocks``, kept on the
  stored rows and sent back verbatim, as Anthropic requires for tool use with thinking; left out when another
  model made them, ``thinking_model``), then text, then
  ``tool_use`` blocks. Tool results become ``tool_result`` blocks in a user message; consecutive messages of one
  role are merged, and a conversation that starts with the assistant gets a user turn before it.
- Tools become ``{name, description, input_schema}`` (the last one cached); tool_choice maps to Anthropic's, with
  ``disable_parallel_tool_use`` unless parallel calls were asked for. With thinking on, Anthropic accepts only
  ``auto`` (Letta does the same), and the temperature is 1.0 whatever the config's, as Letta sends it.
- letta_v1 agents, as Letta's client sends them: tool_choice is always ``auto`` (a call is never forced), and
  heartbeat user messages are left out. Other agents with ``enable_reasoner`` get each heartbeat that follows a
  tool result appended to it (", "-joined), so no text sits between two tool turns (thinking would be dropped).
- Other agents whose model neither thinks natively nor writes a `thinking` argument get the reply started for them
  (an assistant turn of ``<thinking>`` last, `prefilled`), as Letta asks Claude to think in text before its call;
  Opus models are not (Anthropic refused a prefill beside tools for Claude 3 Opus), nor is a forced call (Letta
  has the model think in an argument then).
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memlet.llm.model_quirks import supports_structured_output
from memlet.llm.types import LETTA_V1_AGENT, REASONING_ITEMS_KEY, TOOL_RESULT_PARTS_KEY, ChatRequest

# The internal (OpenAI-style) assistant message's list of provider thinking blocks, in Anthropic's own shape.
THINKING_BLOCKS_KEY = "thinking_blocks"
# The model that made them (the stored row's; None when unknown): thinking of another model, or of an unknown one,
# is not sent back, as Letta drops it (its signature would not verify).
THINKING_MODEL_KEY = "thinking_model"
# The keys of internal chat messages that the chat completions body leaves out: Anthropic's body reads the first
# three, the Responses API's the last (`memlet.llm.responses_format`).
ANTHROPIC_ONLY_KEYS = (THINKING_BLOCKS_KEY, THINKING_MODEL_KEY, TOOL_RESULT_PARTS_KEY, REASONING_ITEMS_KEY)
CACHE_CONTROL = {"type": "ephemeral"}
DEFAULT_MAX_TOKENS = 4096  # Letta's default when an llm_config sets none
MIN_THINKING_BUDGET = 1024
_ADAPTIVE_PREFIXES = ("claude-opus-4-6", "claude-sonnet-4-6")
_EFFORT_PREFIXES = ("claude-opus-4-5", *_ADAPTIVE_PREFIXES)
_REASONER_PREFIXES = ("claude-3-7-sonnet", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4-5")
CONVERSATION_START = "(conversation start)"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
ADAPTIVE_BETA = "adaptive-thinking-2026-01-28"
EFFORT_BETA = "effort-2025-11-24"
MAX_EFFORT_BETA = "max-effort-2026-01-24"
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-11-13"
# Opus 4.5 keeps every thinking block in context when thinking (better cache hits), as Letta asks it to.
KEEP_THINKING = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}


@dataclass(frozen=True, slots=True)
class AnthropicOptions:
    """Per-agent settings from its llm_config that shape the body (the pooled client is shared by agents)."""

    thinking: bool = False
    enable_reasoner: bool = True  # the config's flag, whatever the model (Letta merges heartbeats on it)
    thinking_budget: int = MIN_THINKING_BUDGET
    effort: str | None = None
    model: str = ""
    betas: tuple[str, ...] = ()  # the anthropic-beta header, as Letta sets it for these features
    minimax: bool = False  # MiniMax's Anthropic-compatible API: no beta headers, a temperature in (0, 1]
    thoughts_in_kwargs: bool = False  # the config's put_inner_thoughts_in_kwargs (tools carry `thinking`)

    @classmethod
    def from_llm_config(cls, llm_config: dict[str, Any]) -> "AnthropicOptions":
        model = str(llm_config.get("model") or "")
        if llm_config.get("model_endpoint_type") == "minimax":
            # Every MiniMax model thinks (as Letta treats them), with a budget and never a beta header.
            return cls(
                thinking=bool(llm_config.get("enable_reasoner")),
                enable_reasoner=bool(llm_config.get("enable_reasoner", True)),
                thinking_budget=max(int(llm_config.get("max_reasoning_tokens") or 0), MIN_THINKING_BUDGET),
                model=model,
                minimax=True,
                thoughts_in_kwargs=bool(llm_config.get("put_inner_thoughts_in_kwargs")),
            )
        reasoner = model.startswith(_REASONER_PREFIXES)
        budget = int(llm_config.get("max_reasoning_tokens") or 0)
        effort = llm_config.get("effort") if model.startswith(_EFFORT_PREFIXES) else None
        thinking = bool(reasoner and llm_config.get("enable_reasoner"))
        adaptive = model.startswith(_ADAPTIVE_PREFIXES)
        betas: list[str] = []
        if thinking:
            betas.append(ADAPTIVE_BETA if adaptive else INTERLEAVED_BETA)
        if effort:
            betas.append(EFFORT_BETA)
            if adaptive and effort == "max":
                betas.append(MAX_EFFORT_BETA)
        if thinking and model.startswith("claude-opus-4-5"):
            betas.append(CONTEXT_MANAGEMENT_BETA)
        if llm_config.get("strict") and supports_structured_output(llm_config):
            betas.append(STRUCTURED_OUTPUTS_BETA)
        return cls(
            thinking=thinking,
            enable_reasoner=bool(llm_config.get("enable_reasoner", True)),
            thinking_budget=max(budget, MIN_THINKING_BUDGET),
            effort=str(effort) if effort else None,
            model=model,
            betas=tuple(betas),
            thoughts_in_kwargs=bool(llm_config.get("put_inner_thoughts_in_kwargs")),
        )


def _minimax_temperature(value: float) -> float:
    """MiniMax takes a temperature in (0, 1]; Letta clamps one outside it to 0.01 or 1.0."""
    return 0.01 if value <= 0 else min(value, 1.0)


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """OpenAI message content (a string or parts) as Anthropic content blocks. Text of only whitespace is left out,
    as Letta drops it: Anthropic refuses such a block (a model's "\n\n" before a tool call would break the next
    request), and a message left with no blocks is not sent."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if part.get("type") == "text" and str(part.get("text") or "").strip():
            blocks.append({"type": "text", "text": str(part["text"])})
        elif part.get("type") == "image_url":
            blocks.append(_image_block(str((part.get("image_url") or {}).get("url") or "")))
    return blocks


def _image_block(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url.removeprefix("data:").split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


MALFORMED_ARGUMENTS_KEY = "_malformed_tool_arguments"
_NOT_IN_TOOL_IDS = re.compile(r"[^a-zA-Z0-9_-]")


def tool_use_id(call_id: Any) -> str:
    """A call id as Anthropic takes it: letters, digits, `_` and `-` only, any other character written as `_`,
    as Letta sanitizes it (another provider's model may have made "Read:93" before the agent moved to Claude)."""
    return _NOT_IN_TOOL_IDS.sub("_", str(call_id or ""))


def _tool_input(arguments: str) -> dict[str, Any]:
    """A stored call's arguments as Anthropic's `input` object. Arguments that are not a JSON object (a model cut
    off mid-call, a bad escape) go out whole under `_malformed_tool_arguments`, as Letta sends them, so the model
    sees what it wrote rather than a call that seems to have had no arguments."""
    if not arguments:
        return {}
    try:
        value = json.loads(arguments, strict=False)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {MALFORMED_ARGUMENTS_KEY: arguments}


def _assistant_blocks(message: dict[str, Any], model: str) -> list[dict[str, Any]]:
    made_by = message.get(THINKING_MODEL_KEY)
    same_model = made_by is not None and made_by.split("/", 1)[-1] == model
    blocks = [dict(block) for block in message.get(THINKING_BLOCKS_KEY) or []] if same_model else []
    blocks += _text_blocks(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name, arguments = str(function.get("name") or ""), str(function.get("arguments") or "")
        blocks.append(
            {"type": "tool_use", "id": tool_use_id(call["id"]), "name": name, "input": _tool_input(arguments)}
        )
    return blocks


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def is_heartbeat(text: Any) -> bool:
    """Whether a user text is a heartbeat the loop wrote (Letta's `is_heartbeat`: JSON with a reason)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return False
    return isinstance(value, dict) and "reason" in value and value.get("type") == "heartbeat"


def _without_heartbeats(blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (b for b in blocks if not (b.get("type") == "text" and is_heartbeat(b.get("text"))))


def _merge_heartbeats(message: dict[str, Any]) -> None:
    """Letta's `merge_heartbeats_into_tool_responses` on one message: the heartbeat texts right after a user
    turn's first block, a tool result, are appended to that result's content."""
    blocks = message["content"]
    if message["role"] != "user" or len(blocks) < 2 or blocks[0].get("type") != "tool_result":
        return
    result, rest = dict(blocks[0]), 1
    while rest < len(blocks) and blocks[rest].get("type") == "text" and is_heartbeat(blocks[rest].get("text")):
        if isinstance(result["content"], list):  # a result in parts (text and images): the heartbeat is one more
            result["content"] = [*result["content"], {"type": "text", "text": blocks[rest]["text"]}]
        else:
            result["content"] = f"{result['content']}, {blocks[rest]['text']}"
        rest += 1
    message["content"] = [result, *blocks[rest:]]


def system_event(text: str) -> str:
    """A system message after the first as the user text Claude is sent: ``<event>SYSTEM ALERT: ...</event>``, or
    the alert unwrapped when its text already holds an ``<event>`` element, as Letta leaves such tags unnested."""
    alert = f"SYSTEM ALERT: {text}"
    return alert if "<event>" in alert and "</event>" in alert else f"<event>{alert}</event>"


def split_messages(
    messages: list[dict[str, Any]],
    *,
    model: str = "",
    drop_heartbeats: bool = False,
    merge_heartbeats: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``system`` blocks and the ``messages`` list of an Anthropic request to `model` (`drop_heartbeats`:
    heartbeat texts left out, as Letta's `drop_heartbeats` does for letta_v1 agents; `merge_heartbeats`: appended
    to the tool result before them, `_merge_heartbeats`)."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and index == 0:
            system = _text_blocks(message.get("content"))
        elif role == "assistant":
            _append(out, "assistant", _assistant_blocks(message, model))
        elif role == "tool":
            content = message.get(TOOL_RESULT_PARTS_KEY) or message.get("content") or ""
            result = {
                "type": "tool_result",
                "tool_use_id": tool_use_id(message.get("tool_call_id")),
                "content": content,
            }
            _append(out, "user", [result])
        elif role == "system":  # a system message after the first: an event in a user turn, as Letta sends it
            _append(out, "user", _text_blocks(system_event(str(message.get("content") or ""))))
        else:
            blocks = _text_blocks(message.get("content"))
            _append(out, "user", list(_without_heartbeats(blocks)) if drop_heartbeats else blocks)
    if merge_heartbeats:
        for message in out:
            _merge_heartbeats(message)
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": CONVERSATION_START}]})
    if system:
        system[-1] = {**system[-1], "cache_control": CACHE_CONTROL}
    if out:
        # The conversation so far is cached too: its final block is marked, as Letta marks it each request.
        blocks = out[-1]["content"]
        blocks[-1] = {**blocks[-1], "cache_control": CACHE_CONTROL}
    return system, out


def _tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function = tool.get("function") or {}
        params = function.get("parameters") or {"type": "object", "properties": {}}
        entry = {"name": function.get("name"), "description": function.get("description") or "", "input_schema": params}
        if function.get("strict"):  # set by the loop only where the model takes it (structured outputs)
            entry["strict"] = True
        out.append(entry)
    if out:
        out[-1] = {**out[-1], "cache_control": CACHE_CONTROL}
    return out


def _tool_choice(choice: str | dict[str, Any] | None, auto: bool, parallel: bool | None) -> dict[str, Any]:
    """Anthropic's tool_choice for the loop's (`auto`: always auto, with thinking on or for letta_v1 agents)."""
    if auto or choice in (None, "auto"):
        mapped: dict[str, Any] = {"type": "auto"}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "required":
        mapped = {"type": "any"}
    elif isinstance(choice, dict):
        mapped = {"type": "tool", "name": (choice.get("function") or {}).get("name")}
    else:
        mapped = {"type": "auto"}
    # Parallel use is on only when the loop asked for it (config on, no ordering rules), as in Letta.
    mapped["disable_parallel_tool_use"] = not parallel
    return mapped


THINKING_PREFILL = "<thinking>"


def prefilled(request: ChatRequest, options: AnthropicOptions) -> bool:
    """Whether the body ends with an assistant turn of ``<thinking>`` for the model to go on from: a loop request
    of an agent other than letta_v1 (the summarizer's are not) whose model does not think natively, is not asked
    for a `thinking` argument and is not forced to call one tool (Letta's Claude client then adds that argument),
    unless it is an Opus model."""
    if request.agent_type in (None, LETTA_V1_AGENT) or options.thinking or options.thoughts_in_kwargs:
        return False
    forced = bool(request.tools) and isinstance(request.tool_choice, dict)
    return not forced and "opus" not in request.model.split("/", 1)[-1]


def request_body(request: ChatRequest, options: AnthropicOptions) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages`` for `request` (without the ``stream`` flag)."""
    v1 = request.agent_type == LETTA_V1_AGENT
    merge = not v1 and options.enable_reasoner
    # A handle given as the model ("anthropic/claude-...") names the model after its slash, as Letta reads it.
    model = request.model.split("/", 1)[-1]
    system, messages = split_messages(request.messages, model=model, drop_heartbeats=v1, merge_heartbeats=merge)
    if prefilled(request, options):
        messages.append({"role": "assistant", "content": THINKING_PREFILL})
    max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = _tools(request.tools)
        auto = options.thinking or v1
        body["tool_choice"] = _tool_choice(request.tool_choice, auto, request.parallel_tool_calls)
    if options.thinking:
        if options.model.startswith(_ADAPTIVE_PREFIXES):
            body["thinking"] = {"type": "adaptive"}
        else:
            # The budget must stay below max_tokens; room is made for the answer after the thinking.
            body["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
            body["max_tokens"] = max(max_tokens, options.thinking_budget + 1)
        body["temperature"] = 1.0  # the only value thinking takes, which Letta sends whatever the config's
    elif request.temperature is not None:
        body["temperature"] = _minimax_temperature(request.temperature) if options.minimax else request.temperature
    if options.effort:
        body["output_config"] = {"effort": options.effort}
    if CONTEXT_MANAGEMENT_BETA in options.betas:
        body["context_management"] = KEEP_THINKING
    if request.extra_body:
        body |= request.extra_body
    return body
