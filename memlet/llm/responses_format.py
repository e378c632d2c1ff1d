"""The body of a call to OpenAI's Responses API (``POST /responses``), built from a chat request as Letta 0.16.8
builds it for a letta_v1 agent on one of OpenAI's reasoning models (`uses_responses_api`).

The chat messages become ``input`` items: the system prompt a ``developer`` message, user text ``input_text``
parts (images ``input_image``), an assistant message its reasoning items (summaries with their encrypted content,
`REASONING_ITEMS_KEY`), its text and a ``function_call`` item per call, a tool return a ``function_call_output``.
Nothing is stored at OpenAI (``store: false``): the encrypted reasoning is asked for (``include``) and sent back on
the next requests instead. Tools lose their ``function`` wrapper; ``reasoning`` asks for a detailed summary at the
config's effort; ``verbosity`` and a JSON schema ``response_format`` go under ``text``; ``max_tokens`` is
``max_output_tokens``. As in Letta the body always names ``tools``, ``tool_choice`` and ``temperature`` (null when
there are no tools, and for these models, which take only the default temperature), and asks for no parallel calls.
"""

from typing import Any

from memlet.llm import model_quirks as quirks
from memlet.llm.types import LETTA_V1_AGENT, REASONING_ITEMS_KEY, TOOL_RESULT_PARTS_KEY, ChatRequest

RESPONSES_PATH = "/responses"
REASONING_SUMMARY = "detailed"  # the summary level Letta asks for
ENCRYPTED_REASONING = "reasoning.encrypted_content"


def uses_responses_api(request: ChatRequest) -> bool:
    """Whether an OpenAI-compatible client sends `request` to the Responses API: a letta_v1 agent's step on one of
    OpenAI's reasoning models (o1, o3, o4, gpt-5), Letta's rule; every other request is a chat completion."""
    return request.agent_type == LETTA_V1_AGENT and quirks.is_reasoning_model(request.model)


def responses_body(request: ChatRequest, provider: str) -> dict[str, Any]:
    """The JSON body for `request` (without ``stream``); `provider`: the endpoint type."""
    tools = [_tool(tool) for tool in request.tools] if request.tools else None
    body: dict[str, Any] = {
        "include": [ENCRYPTED_REASONING],
        "input": responses_input(request.messages),
    }
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    body["model"] = request.model
    body["parallel_tool_calls"] = False  # these models take no parallel calls
    if request.prompt_cache_retention is not None:
        body["prompt_cache_retention"] = request.prompt_cache_retention
    if request.reasoning_effort is not None:  # set only for reasoning models, and never to "none"
        body["reasoning"] = {"effort": request.reasoning_effort, "summary": REASONING_SUMMARY}
    if (model := quirks.priority_tier_model(provider, request.model)) is not None:
        body |= {"model": model, "service_tier": "priority"}
    body["store"] = False
    body["temperature"] = None
    if (text := _text_config(request)) is not None:
        body["text"] = text
    body["tool_choice"] = _tool_choice(request.tool_choice) if tools else None
    body["tools"] = tools
    if request.user is not None:
        body["user"] = request.user
    return body


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    return {
        "type": "function",
        "name": function.get("name"),
        "description": function.get("description"),
        "parameters": function.get("parameters"),
        "strict": bool(function.get("strict", False)),
    }


def _tool_choice(choice: str | dict[str, Any] | None) -> str | dict[str, Any]:
    """A chat tool_choice in the Responses form: a named function loses its `function` wrapper; none is `auto`."""
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        return {"type": "function", "name": name}
    return choice or "auto"


def _text_config(request: ChatRequest) -> dict[str, Any] | None:
    """`text`: the verbosity (gpt-5), and a JSON schema response format as `format` (Letta leaves out `text` and
    `json_object`, which the Responses API does not take this way, and a schema without its `schema`)."""
    text: dict[str, Any] = {}
    if request.verbosity is not None:
        text["verbosity"] = request.verbosity
    fmt = request.response_format or {}
    schema = fmt.get("json_schema") if fmt.get("type") == "json_schema" else None
    if isinstance(schema, dict) and "schema" in schema:
        text["format"] = {
            "type": "json_schema",
            "name": schema.get("name", "response_schema"),
            "schema": schema["schema"],
            "strict": schema.get("strict", True),
        }
    return text or None


def responses_input(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages as the Responses API's input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            items.append({"role": "developer", "content": message.get("content")})
        elif role == "user":
            items.append({"role": "user", "content": _user_parts(message.get("content"))})
        elif role == "assistant":
            items.extend(_assistant_items(message))
        elif role == "tool":
            items.append(_tool_output(message))
    return items


def _user_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if part.get("type") == "text":
            parts.append({"type": "input_text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            image = part.get("image_url") or {}
            parts.append(
                {"type": "input_image", "image_url": image.get("url"), "detail": image.get("detail") or "auto"}
            )
    return parts or [{"type": "input_text", "text": ""}]


def _assistant_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Reasoning items first, then the text, then the calls, as Letta orders an assistant message's."""
    items: list[dict[str, Any]] = list(message.get(REASONING_ITEMS_KEY) or [])
    content = message.get("content")
    if isinstance(content, str) and content:
        items.append({"role": "assistant", "content": content})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
                "status": "completed",
            }
        )
    return items


def _tool_output(message: dict[str, Any]) -> dict[str, Any]:
    """A tool return; one a client gave in parts (text and images) goes out in parts, as Letta sends it."""
    output: str | list[dict[str, Any]] = message.get("content") or ""
    if parts := message.get(TOOL_RESULT_PARTS_KEY):
        output = [_output_part(part) for part in parts]
    return {"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": output}


def _output_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") == "image":
        source = part.get("source") or {}
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source.get('data')}"
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    return {"type": "input_text", "text": part.get("text", "")}
