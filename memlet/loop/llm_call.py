"""Build one LLM request from the loaded state and call the model, forwarding token deltas when streaming."""

from collections.abc import AsyncIterator, Sequence
from typing import Any

from memlet.db import models as orm
from memlet.llm.client import ChatRequest, ChatResult, ContentDelta, LLMClient, ReasoningDelta, ToolCallDelta
from memlet.loop.context import is_v2, to_openai_messages, tool_definition
from memlet.loop.events import TokenDelta
from memlet.loop.state import LoopState
from memlet.loop.tool_rules import ToolRulesSolver
from memlet.messages.views import otid_from_id


def request_tools(
    state: LoopState, solver: ToolRulesSolver, client_tools: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str], str | dict[str, Any] | None]:
    """The tool objects to send, the names the model may call, and the tool_choice.

    Client-side tools override server tools of the same name. V2 agents must always call a tool.
    """
    agent = state.agent
    v2 = is_v2(agent.agent_type)
    schemas: dict[str, dict[str, Any]] = {t.name: t.json_schema or {"name": t.name} for t in state.tools}
    for tool in client_tools:
        name = str(tool.get("name"))
        params = tool.get("parameters") or {"type": "object", "properties": {}}
        schemas[name] = {"name": name, "description": tool.get("description") or "", "parameters": params}
    allowed = solver.allowed_tools(list(schemas), _last_return(state.messages))
    terminal = solver.terminal_tool_names()
    tools = [tool_definition(schemas[n], v2=v2, terminal=n in terminal) for n in allowed]
    if not tools:
        return [], allowed, None
    forced = v2 or solver.must_force_tool_call()
    choice: str | dict[str, Any] = "auto"
    if forced:
        choice = {"type": "function", "function": {"name": allowed[0]}} if len(allowed) == 1 else "required"
    return tools, allowed, choice


def _last_return(rows: Sequence[orm.Message]) -> str | None:
    for row in reversed(rows):
        if row.role == "tool":
            return "".join(str(p.get("text", "")) for p in row.content or [] if p.get("type") == "text")
    return None


async def call_llm(
    llm: LLMClient,
    state: LoopState,
    system_text: str,
    pending: Sequence[orm.Message],
    tools: list[dict[str, Any]],
    tool_choice: str | dict[str, Any] | None,
    stream_tokens: bool,
    assistant_id: str,
    result_box: list[ChatResult],
) -> AsyncIterator[TokenDelta]:
    """Call the model; with `stream_tokens` yield its fragments labelled with the assistant row's id and otids."""
    config = state.agent.llm_config
    request = ChatRequest(
        model=str(config.get("model")),
        messages=to_openai_messages(system_text, [*state.messages[1:], *pending], state.agent.agent_type),
        tools=tools or None,
        tool_choice=tool_choice,
        parallel_tool_calls=False if tools else None,
        temperature=config.get("temperature"),
        max_tokens=config.get("max_tokens"),
        stream=stream_tokens,
    )
    async for event in llm.stream_chat(request):
        if isinstance(event, ChatResult):
            result_box.append(event)
        elif isinstance(event, ReasoningDelta):
            yield TokenDelta("reasoning", assistant_id, otid_from_id(assistant_id, 0), text=event.text)
        elif isinstance(event, ContentDelta):
            yield TokenDelta("assistant", assistant_id, otid_from_id(assistant_id, 1), text=event.text)
        elif isinstance(event, ToolCallDelta):
            yield TokenDelta(
                "tool_call",
                assistant_id,
                otid_from_id(assistant_id, 2),
                tool_call_id=event.id,
                name=event.name,
                arguments=event.arguments or None,
            )
