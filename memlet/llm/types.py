"""The request and stream-event values an ``LLMClient`` takes and yields (plain dataclasses, no SDK types)."""

from dataclasses import dataclass
from typing import Any

LETTA_V1_AGENT = "letta_v1_agent"  # the agent type whose requests differ (`ChatRequest.agent_type`)
# A `tool` chat message's result as content parts (text, and images as Anthropic's base64 image blocks), when a
# client answered with parts: Anthropic's body sends them as the tool_result's content; OpenAI's leaves the key out
# and sends `content`, the text with a placeholder per image, as Letta does for chat-completion models.
TOOL_RESULT_PARTS_KEY = "tool_result_parts"
# An assistant chat message's reasoning items from OpenAI's Responses API (their summaries and encrypted content):
# only the Responses body sends them back (`memlet.llm.responses_format`); the other bodies leave the key out.
REASONING_ITEMS_KEY = "responses_reasoning"


@dataclass(slots=True)
class ChatRequest:
    """One chat.completions call; ``messages`` and ``tools`` are already in OpenAI's wire format."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = True
    # Set only where the model takes them (`memlet.llm.model_quirks`); None leaves them out of the body.
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | None = None
    reasoning_effort: str | None = None
    verbosity: str | None = None
    prompt_cache_retention: str | None = None  # OpenAI's "24h" for the models that keep a cache that long
    user: str | None = None  # the requesting user's id (OpenAI-compatible endpoints only)
    # Per-token log probabilities (an agent whose llm_config has `return_logprobs`); None leaves them out.
    logprobs: bool | None = None
    top_logprobs: int | None = None
    # Provider-specific fields (e.g. reasoning_effort) passed through untouched.
    extra_body: dict[str, Any] | None = None
    # `messages` already encoded, one `orjson.Fragment` each (`loop.buffer_chat.Wire`): an OpenAI-compatible body
    # splices them in instead of encoding the messages again. None: encode `messages`.
    encoded_messages: list[Any] | None = None
    # The agent's type, for formats that depend on it (Anthropic's, for letta_v1 agents); None outside the loop.
    agent_type: str | None = None
    # Set by the client: the body it posted, as sent (the encoded bytes, or the dict the SDK encoded), for the
    # step's provider trace.
    sent: bytes | dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ContentDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Reasoning text streamed by providers that send ``reasoning_content`` (DeepSeek) or ``reasoning``, or a
    fragment of an Anthropic thinking block (``thinking_block``): its text, or, once the block is written, its
    ``signature`` with no text."""

    text: str
    signature: str | None = None
    thinking_block: bool = False


@dataclass(frozen=True, slots=True)
class HiddenReasoningDelta:
    """Thinking the provider sends encrypted (Anthropic's ``redacted_thinking`` block: its opaque ``data``), whole."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of tool call ``index``: its name when first seen (Anthropic's: on every piece), then argument
    fragments; ``id`` is always set."""

    index: int
    id: str
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text exactly as the model produced it (may be invalid; the loop decides)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    # The details are None when the provider did not report them (a token stream's usage then shows null, as Letta's).
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None  # prompt tokens written to the provider's cache (Anthropic reports them)


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """One native thinking block as the provider returned it; sent back verbatim on later requests.

    Anthropic signs its thinking (``signature``) and may return it encrypted (``redacted``: the opaque ``data``).
    """

    text: str = ""
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class SummarizedReasoning:
    """One reasoning item of OpenAI's Responses API: its id, its summary parts and the opaque encrypted reasoning
    (sent back on later requests)."""

    id: str
    summary: tuple[str, ...] = ()
    encrypted_content: str | None = None


@dataclass(frozen=True, slots=True)
class ChatResult:
    """The assembled assistant message plus why it ended and what it cost."""

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage
    reasoning: str | None = None
    model: str | None = None
    response_id: str | None = None
    # The native thinking blocks with their signatures, in order (providers that sign their thinking).
    thinking: tuple[ThinkingBlock, ...] = ()
    # OpenAI's `choices[0].logprobs` of the answer (`memlet.llm.logprobs`), when the provider sent any.
    logprobs: dict[str, Any] | None = None
    # The reasoning items of a Responses API answer, in order (stored as summarized_reasoning parts).
    summarized: tuple[SummarizedReasoning, ...] = ()
    # The provider's own usage object as it reported it (for the step's provider trace); None: none reported.
    raw_usage: dict[str, Any] | None = None
    # The provider's whole answer as it sent it, where one object carries it (a Responses API `response`).
    raw_response: dict[str, Any] | None = None


ChatEvent = ContentDelta | ReasoningDelta | HiddenReasoningDelta | ToolCallDelta | ChatResult
