"""The chat request of one step, built from the loaded state alone: tools, tool_choice, messages, parameters.

The one place a step's request is built; the preview route (`turns/preview.py`) shows the same value. Which
parameters a model takes is decided in `memlet.llm.model_quirks`, from the agent's llm_config.
"""

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import orjson

from memlet.db import models as orm
from memlet.db.message_row import MessageLike
from memlet.llm import model_quirks as quirks
from memlet.llm.anthropic_format import AnthropicOptions
from memlet.llm.chat_format import is_v2, request_messages, thoughts_scrubbed
from memlet.llm.openai_http import encode_json
from memlet.llm.tool_definitions import message_schema, tool_definition
from memlet.llm.types import LETTA_V1_AGENT, ChatRequest
from memlet.loop.agent_state import LoopState
from memlet.loop.buffer_chat import BufferChat, converted
from memlet.loop.headroom import DEFAULT_CONTEXT_WINDOW, completion_limit
from memlet.tools.solver import ToolRulesSolver

SEND_MESSAGE = "send_message"  # the tool whose `message` an agent's response_format shapes
# Letta's V3 cap on one tool return in a request: a fifth of the window at ~4 characters a token, at least 5,000.
MIN_TOOL_RETURN_CHARS = 5000


def tool_return_limit(llm_config: Mapping[str, Any]) -> int:
    """The characters one tool return may take in a V3 request (the stored row is never cut)."""
    window = int(llm_config.get("context_window") or DEFAULT_CONTEXT_WINDOW)
    return max(MIN_TOOL_RETURN_CHARS, int(window * 0.2 * 4))


def inner_thoughts_in_kwargs(agent: orm.Agent) -> bool:
    """Whether a V2 agent's model is asked for its thoughts as a `thinking` tool argument (Letta's
    `put_inner_thoughts_in_kwargs`); letta_v1 agents never are, nor DeepSeek's models (Letta's DeepSeek client
    turns the flag off: they think in their content)."""
    config = agent.llm_config or {}
    if config.get("model_endpoint_type") == "deepseek":
        return False
    return is_v2(agent.agent_type) and bool(config.get("put_inner_thoughts_in_kwargs"))


def step_thoughts_in_kwargs(agent: orm.Agent, tool_choice: str | dict[str, Any] | None) -> bool:
    """Whether this step's request asks for thoughts as a `thinking` argument: as configured, or for a V2 agent's
    step forced to one tool on Claude that does not think natively. Letta's Claude client asks that tool for the
    argument then (and gives the history's thoughts back as arguments), since the call is not started with
    `<thinking>` text."""
    if inner_thoughts_in_kwargs(agent):
        return True
    config = agent.llm_config or {}
    if config.get("model_endpoint_type") != "anthropic" or not is_v2(agent.agent_type):
        return False
    return isinstance(tool_choice, dict) and not AnthropicOptions.from_llm_config(config).thinking


def has_ordering_rules(agent: orm.Agent) -> bool:
    """Any tool rule other than requires_approval (these turn parallel tool calls off, as in Letta)."""
    return any(rule.get("type") != "requires_approval" for rule in agent.tool_rules or [])


def parallel_calls_enabled(agent: orm.Agent) -> bool:
    """Whether this agent's model may return, and the loop will run, several tool calls in one response.

    V2 agents run one call per step whatever the config says, as Letta's V2 loop does.
    """
    if is_v2(agent.agent_type):
        return False
    return quirks.parallel_tool_calls_enabled(agent.llm_config or {}, has_tool_rules=has_ordering_rules(agent))


def request_tools(
    state: LoopState, solver: ToolRulesSolver, client_tools: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str], str | dict[str, Any] | None]:
    """The tool objects to send, the names the model may call, and the tool_choice.

    Client-side tools override server tools of the same name and are always offered (the rules govern server
    tools only). tool_choice follows Letta's OpenAI client: one forced tool is named (V2: any single tool); V3
    asks for `required` while a rule forces a call; otherwise only letta_v1 agents, and servers that reject
    `required`, get `auto`: every other type (V2, and sleeptime agents on the V3 loop) must call a tool.
    """
    agent = state.agent
    config = agent.llm_config or {}
    v2 = is_v2(agent.agent_type)
    schemas: dict[str, dict[str, Any]] = {t.name: t.json_schema or {"name": t.name} for t in state.tools}
    client: dict[str, dict[str, Any]] = {}
    for tool in client_tools:
        name = str(tool.get("name"))
        params = tool.get("parameters") or {"type": "object", "properties": {}}
        client[name] = {"name": name, "description": tool.get("description") or "", "parameters": params}
    server = [n for n in schemas if n not in client]
    allowed = [*solver.allowed_tools(server, _last_return(state.messages)), *client]
    terminal = solver.terminal_tool_names()
    if not allowed:
        return [], allowed, None
    forced = solver.must_force_tool_call()
    choice: str | dict[str, Any] = "required"
    if len(allowed) == 1 and (forced or v2):
        choice = {"type": "function", "function": {"name": allowed[0]}}
    elif forced and not v2:  # Letta's V2 loop never tells the client a rule forces a call
        choice = "required"
    elif quirks.requires_auto_tool_choice(config) or agent.agent_type == LETTA_V1_AGENT:
        choice = "auto"
    choice = quirks.tool_choice_for(config, choice)
    thinking = step_thoughts_in_kwargs(agent, choice)
    strict = bool(config.get("strict")) and quirks.supports_structured_output(config)
    message = message_schema(agent.response_format)
    tools = []
    for name in allowed:
        is_client = name in client
        tools.append(
            tool_definition(
                client[name] if is_client else schemas[name],
                v2=v2,
                terminal=name in terminal,
                thinking=thinking,
                strict=strict and not is_client,
                message=message if name == SEND_MESSAGE else None,
            )
        )
    return tools, allowed, choice


def _last_return(rows: Sequence[MessageLike]) -> str | None:
    for row in reversed(rows):
        if row.role == "tool":
            return "".join(str(p.get("text", "")) for p in row.content or [] if p.get("type") == "text")
    return None


def reasoning_echoed(config: Mapping[str, Any], rows: Sequence[MessageLike]) -> bool:
    """Whether assistant messages carry their reasoning back (`reasoning_content`): DeepSeek's thinking mode
    wants it on every tool call within a turn (a request without it is refused), and not once a new user message
    starts the next turn, as Letta's DeepSeek client sends it."""
    return config.get("model_endpoint_type") == "deepseek" and bool(rows) and rows[-1].role != "user"


def build_chat_request(
    state: LoopState,
    system_text: str,
    pending: Sequence[orm.Message],
    tools: list[dict[str, Any]],
    tool_choice: str | dict[str, Any] | None,
    chat: BufferChat | None = None,
    *,
    user: str | None = None,
) -> ChatRequest:
    """The chat request of one step (pure): the system prompt, the in-context buffer, then the new input rows
    (converted through the step's `chat`, which its compaction check used); `user`: the requesting user's id."""
    agent = state.agent
    config = agent.llm_config or {}
    model = str(config.get("model"))
    openai_reasoner = config.get("model_endpoint_type") == "openai" and quirks.is_reasoning_model(model)
    rows: list[MessageLike] = [*state.messages[1:], *pending]
    thoughts = step_thoughts_in_kwargs(agent, tool_choice if tools else None)
    scrub = thoughts_scrubbed(config)
    echo = reasoning_echoed(config, rows)
    system_role = system_role_for(config)
    return_limit = None if is_v2(agent.agent_type) else tool_return_limit(config)
    encoded: list[Any] | None = None
    messages_size: int | None = None
    messages_tokens: Callable[[], int] | None = None
    if chat is None:
        buffer = converted(
            chat, rows, agent.agent_type, inner_thoughts_in_kwargs=thoughts, scrub_thoughts=scrub, echo_reasoning=echo
        )
        messages = request_messages(system_text, buffer, system_role=system_role, tool_return_limit=return_limit)
    else:
        # Each buffer message's request form and JSON, kept from earlier steps and turns: only new ones are encoded.
        wire = chat.wire(
            rows,
            agent.agent_type,
            inner_thoughts_in_kwargs=thoughts,
            scrub_thoughts=scrub,
            echo_reasoning=echo,
            system_role=system_role,
            tool_return_limit=return_limit,
        )
        system = {"role": system_role, "content": system_text}
        system_json = encode_json(system)
        messages = [system, *wire.messages]
        messages_size = wire.json_length(system_json)
        messages_tokens = partial(wire.tokens, system)
        if not wire.any_thinking():  # the OpenAI body leaves thinking blocks out: those messages are encoded anew
            encoded = [orjson.Fragment(system_json), *wire.fragments]
    if (shaped := endpoint_messages(config, messages)) is not None:
        messages, encoded = shaped, None
    window = int(config.get("context_window") or DEFAULT_CONTEXT_WINDOW)
    temperature = config.get("temperature")
    if openai_reasoner and not quirks.supports_temperature(model):
        temperature = 1.0  # the only value these models take
    return ChatRequest(
        model=model,
        messages=messages,
        tools=tools or None,
        tool_choice=tool_choice,
        # Left out for OpenAI's reasoning models, which refuse the parameter.
        parallel_tool_calls=parallel_calls_enabled(agent) if tools and not openai_reasoner else None,
        temperature=temperature,
        # Lowered when the configured limit would not fit in what the prompt leaves of the window.
        max_tokens=completion_limit(
            window,
            config.get("max_tokens"),
            messages,
            tools,
            messages_size=messages_size,
            messages_tokens=messages_tokens,
        ),
        encoded_messages=encoded,
        agent_type=agent.agent_type,
        # Always streamed from the provider, even when the client wants whole messages: the result is the
        # same, and some servers answer a streamed request sooner than a plain one.
        stream=True,
        user=user,
        **provider_params(config),
        **quirks.logprobs_params(config, agent.agent_type),
    )


def system_role_for(config: Mapping[str, Any]) -> str:
    """The role of a request's system message: `developer` for OpenAI's reasoning models that take it."""
    model = str(config.get("model"))
    reasoner = config.get("model_endpoint_type") == "openai" and quirks.is_reasoning_model(model)
    return "developer" if reasoner and quirks.accepts_developer_role(model) else "system"


def endpoint_messages(config: Mapping[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """`messages` as the config's endpoint takes them (null content as "" for gpt-oss, blank text filled for
    Z.ai, Fireworks and Baseten); None when they go as they are."""
    changed = None
    if (emptied := quirks.with_null_content_as_empty(config, messages)) is not None:
        messages = changed = emptied
    if (filled := quirks.with_empty_text_filled(config, messages)) is not None:
        changed = filled
    return changed


def provider_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The per-provider fields of any request to the config's model (a step's, a summary's): `frequency_penalty`,
    `response_format`, `reasoning_effort`, `verbosity`, `prompt_cache_retention` where the model takes them, and
    the endpoint's own fields (`extra_body`: thinking switches, GLM-5's `stop`, OpenRouter's `reasoning`)."""
    model = str(config.get("model"))
    params: dict[str, Any] = {}
    if config.get("model_endpoint_type") in ("anthropic", "minimax"):
        return params  # Anthropic's messages API has none of them (thinking and effort come from the config)
    if config.get("frequency_penalty") is not None:
        params["frequency_penalty"] = config["frequency_penalty"]
    params["response_format"] = quirks.response_format_param(config.get("response_format"))
    effort = config.get("reasoning_effort")
    if quirks.is_reasoning_model(model) and effort and effort != "none":
        params["reasoning_effort"] = effort
    if quirks.supports_verbosity(model) and config.get("verbosity"):
        params["verbosity"] = config["verbosity"]
    params["extra_body"] = quirks.extra_body(config)
    params["prompt_cache_retention"] = quirks.prompt_cache_retention(config)
    return params
