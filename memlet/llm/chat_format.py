"""The LLM request's messages in OpenAI's chat format, with the V2 agents' extras (tool definitions:
``memlet.llm.tool_definitions``)."""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memlet.db.message_row import MessageLike
from memlet.llm.anthropic_format import THINKING_BLOCKS_KEY, THINKING_MODEL_KEY
from memlet.llm.client import wire_tool_call_id
from memlet.llm.tokens import count_message_tokens, count_tools_tokens
from memlet.llm.types import REASONING_ITEMS_KEY, TOOL_RESULT_PARTS_KEY

# Agent types whose every reply is a tool call carrying `thinking` and (non-terminal tools) `request_heartbeat`:
# as in Letta's loop factory, every type but letta_v1_agent and sleeptime_agent (the voice ones included).
V2_AGENT_TYPES = frozenset(
    {
        "memgpt_agent",
        "memgpt_v2_agent",
        "react_agent",
        "workflow_agent",
        "split_thread_agent",
        "voice_convo_agent",
        "voice_sleeptime_agent",
    }
)
THINKING_PARAM = "thinking"
HEARTBEAT_PARAM = "request_heartbeat"
REASONING_CONTENT = "reasoning_content"  # DeepSeek's field for an assistant message's reasoning


# The names Letta sends with a message (`Message.to_openai_dict`); others are left out, as OpenAI refuses them.
_SENDABLE_NAME = re.compile(r"^[^\s<|\\/>]+$")


def is_v2(agent_type: str) -> bool:
    """Whether the agent runs the always-call-a-tool loop (memgpt-style) rather than letta_v1's."""
    return agent_type in V2_AGENT_TYPES


def thoughts_scrubbed(llm_config: Mapping[str, Any]) -> bool:
    """Whether reasoning is fully off (no thoughts in kwargs, no reasoner, no reasoning budget): Letta then leaves
    out the text an assistant message carries beside its tool calls in every request, whatever the agent type or
    provider (`scrub_inner_thoughts_from_messages`), so the model never sees thoughts it was not asked for."""
    return (
        not llm_config.get("put_inner_thoughts_in_kwargs")
        and not llm_config.get("enable_reasoner", True)
        and not llm_config.get("max_reasoning_tokens")
    )


def text_parts(content: list[dict[str, Any]] | None) -> str:
    """The text of a stored message's content parts, joined (other part types are skipped)."""
    if not content:
        return ""
    if len(content) == 1:  # most rows: one text part
        part = content[0]
        return str(part.get("text", "")) if part.get("type") == "text" else ""
    return "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def reasoning_text(parts: list[dict[str, Any]] | None) -> str:
    """A row's reasoning, its reasoning parts' text joined ("" when it has none)."""
    return "".join(str(p.get("reasoning") or "") for p in parts or [] if p.get("type") == "reasoning")


def signed_thinking(content: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A stored row's provider-signed thinking as Anthropic's blocks (unsigned reasoning is never sent back)."""
    blocks: list[dict[str, Any]] = []
    for part in content or []:
        if part.get("type") == "reasoning" and part.get("signature"):
            blocks.append({"type": "thinking", "thinking": part.get("reasoning") or "", "signature": part["signature"]})
        elif part.get("type") == "redacted_reasoning" and part.get("data"):
            blocks.append({"type": "redacted_thinking", "data": part["data"]})
    return blocks


def _with_thinking(message: dict[str, Any], row: MessageLike) -> dict[str, Any]:
    """`message` carrying a row's signed thinking and the model that made it (OpenAI-compatible clients drop
    both keys; Anthropic's sends the thinking back to the same model)."""
    content = row.content
    if content and len(content) == 1 and content[0].get("type") == "text":
        return message  # the common row: one text part, no thinking
    blocks = signed_thinking(content)
    if blocks:
        message[THINKING_BLOCKS_KEY] = blocks
        if row.model:  # unknown (an imported row): Anthropic is not sent the thinking
            message[THINKING_MODEL_KEY] = row.model
    if items := reasoning_items(content):
        message[REASONING_ITEMS_KEY] = items
    return message


def reasoning_items(content: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A stored row's summarized reasoning as the Responses API's reasoning items (summaries and encrypted content),
    as Letta sends them back."""
    items: list[dict[str, Any]] = []
    for part in content or []:
        if part.get("type") == "summarized_reasoning":
            summary = [{"type": "summary_text", "text": str(s.get("text", ""))} for s in part.get("summary") or []]
            item = {"type": "reasoning", "id": part.get("id"), "summary": summary}
            items.append(item | {"encrypted_content": part.get("encrypted_content")})
    return items


def image_url(source: dict[str, Any]) -> str | None:
    """The URL an OpenAI-style model is given for a stored image source (a data: URL for inline data)."""
    if source.get("type") == "url":
        return str(source.get("url") or "") or None
    if source.get("data"):  # base64, or a Letta file image that carries its bytes
        return f"data:{source.get('media_type') or 'image/png'};base64,{source['data']}"
    return None  # a Letta file reference without data: memlet has no file store to read it from


def user_content(content: list[dict[str, Any]] | None) -> str | list[dict[str, Any]]:
    """A user message's content: plain text for one text part, else its text and image_url parts one by one, as
    Letta sends a user message of several parts (`fill_image_content_in_messages`; Claude gets one block each)."""
    if not content or (len(content) == 1 and content[0].get("type") == "text"):
        return text_parts(content)
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if part.get("type") == "text":
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image" and (url := image_url(part.get("source") or {})):
            # URL images were fetched into base64 when the turn started (`loop/images.py`); older rows may
            # still hold a URL, which is passed as is.
            detail = (part.get("source") or {}).get("detail") or "auto"
            parts.append({"type": "image_url", "image_url": {"url": url, "detail": detail}})
    return parts


def _thoughts(parts: list[dict[str, Any]] | None) -> str | None:
    """A V2 row's thoughts as Letta reads them for a call's `thinking` argument: one text part's text, the text
    parts of several joined by blank lines, else None (sent as null)."""
    if not parts:
        return None
    if len(parts) == 1:
        return str(parts[0].get("text", "")) if parts[0].get("type") == "text" else None
    return "\n\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def _wire_calls(calls: list[dict[str, Any]], in_args: bool, parts: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    wired = []
    for call in calls:
        function = dict(call.get("function") or {})
        if in_args:
            # V2 models were asked for their thoughts as the first argument; give them back the same way, with
            # every call's arguments re-encoded as Letta's json_dumps writes them (indented by two).
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = None
            if isinstance(args, dict):
                arguments = {THINKING_PARAM: _thoughts(parts), **args}
                function["arguments"] = json.dumps(arguments, indent=2, ensure_ascii=False)
        wired.append({"id": wire_tool_call_id(call["id"]), "type": "function", "function": function})
    return wired


def truncate_return(text: str, limit: int | None) -> str:
    """A tool return cut to `limit` characters for the request (the stored row keeps it whole)."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated {len(text) - limit} chars]"


def _named(message: dict[str, Any], row: MessageLike) -> dict[str, Any]:
    """`message` with the row's `name` (a user's, given with the input), when OpenAI takes it."""
    if row.name and _SENDABLE_NAME.match(row.name):
        message["name"] = row.name
    return message


def _tool_messages(row: MessageLike) -> list[dict[str, Any]]:
    """One `tool` message per call a tool row answers (a parallel step stores all its returns on one row)."""
    if not row.tool_returns:  # an old row: as in Letta, the only tool message that sends its name (the tool's)
        call_id = wire_tool_call_id(row.tool_call_id or "")
        return [_named({"role": "tool", "tool_call_id": call_id, "content": text_parts(row.content)}, row)]
    returns = row.tool_returns
    items: list[tuple[str, str, dict[str, Any] | None]]
    if len(returns) > 1:
        parts = [str(p.get("text", "")) for p in row.content or [] if p.get("type") == "text"]
        if len(parts) == len(returns):
            items = [(str(r.get("tool_call_id") or ""), text, r) for r, text in zip(returns, parts, strict=True)]
        else:
            items = [(row.tool_call_id or "", "".join(parts), None)]
    else:
        items = [(row.tool_call_id or "", text_parts(row.content), returns[0])]
    return [_tool_message(call_id, text, stored) for call_id, text, stored in items]


def _tool_message(call_id: str, text: str, stored: dict[str, Any] | None) -> dict[str, Any]:
    """A `tool` message; a result a client gave in parts also carries them for Anthropic (`TOOL_RESULT_PARTS_KEY`)."""
    message: dict[str, Any] = {"role": "tool", "tool_call_id": wire_tool_call_id(call_id), "content": text}
    response = stored.get("func_response") if stored else None
    if isinstance(response, list) and (parts := _result_parts(response)):
        message[TOOL_RESULT_PARTS_KEY] = parts
    return message


def _result_parts(response: list[Any]) -> list[dict[str, Any]]:
    """A result's text parts, and its images that carry their data as Anthropic's base64 image blocks (as Letta
    sends a multi-part tool return to Anthropic; an image given only by reference is left out)."""
    parts: list[dict[str, Any]] = []
    for part in response:
        if not isinstance(part, dict):
            continue
        source = part.get("source") if part.get("type") == "image" else None
        if part.get("type") == "text" and part.get("text"):
            parts.append({"type": "text", "text": str(part["text"])})
        elif isinstance(source, dict) and source.get("data"):
            media_type = source.get("media_type") or "image/png"
            parts.append(
                {"type": "image", "source": {"type": "base64", "data": source["data"], "media_type": media_type}}
            )
    return parts


def to_openai_messages(
    system_text: str,
    rows: Sequence[MessageLike],
    agent_type: str,
    *,
    inner_thoughts_in_kwargs: bool = True,
    scrub_thoughts: bool = False,
    system_role: str = "system",
    tool_return_limit: int | None = None,
) -> list[dict[str, Any]]:
    """The chat messages for the LLM: the system prompt, then the in-context buffer (rows after the system row).

    V2 agents get their thoughts back as the `thinking` argument when the model was asked for it that way
    (`inner_thoughts_in_kwargs`), else as the assistant's content; `scrub_thoughts` (`thoughts_scrubbed`) leaves
    that content out beside tool calls. `system_role` is "developer" for OpenAI's reasoning models;
    `tool_return_limit` cuts long tool returns (Letta's V3 request-time cap).
    """
    buffer = buffer_messages(
        rows, agent_type, inner_thoughts_in_kwargs=inner_thoughts_in_kwargs, scrub_thoughts=scrub_thoughts
    )
    return request_messages(system_text, buffer, system_role=system_role, tool_return_limit=tool_return_limit)


def buffer_messages(
    rows: Sequence[MessageLike],
    agent_type: str,
    *,
    inner_thoughts_in_kwargs: bool = True,
    scrub_thoughts: bool = False,
    echo_reasoning: bool = False,
    before: Sequence[dict[str, Any]] = (),
    ends: list[int] | None = None,
) -> list[dict[str, Any]]:
    """The rows as chat messages, without the system prompt and before a request's own choices (the system
    role, the tool-return cap): `request_messages` applies those. The conversion a turn's compaction checks and
    requests share (`loop/buffer_chat.py`).

    `before`: the messages of the rows that come before `rows` (their own conversion), which the result starts
    with; a row that continues the last message replaces it with a new dict, so `before` and its messages are
    never changed. `ends` receives, for each row, the length of the result after it. `echo_reasoning`
    (`reasoning_echoed`): assistant messages carry their reasoning back as `reasoning_content`.
    """
    v2 = is_v2(agent_type)
    in_args = v2 and inner_thoughts_in_kwargs
    out: list[dict[str, Any]] = list(before)
    for row in rows:
        _append_row(out, row, in_args, scrub_thoughts, echo_reasoning)
        if ends is not None:
            ends.append(len(out))
    return out


def _append_row(out: list[dict[str, Any]], row: MessageLike, in_args: bool, scrub: bool, echo: bool = False) -> None:
    """Append one row's chat messages to `out` (`in_args`: a V2 agent's thoughts go back as an argument; `scrub`:
    an assistant row's text beside its tool calls is left out, its signed thinking kept, as Letta scrubs it;
    `echo`: an assistant message carries its reasoning as `reasoning_content`, always beside tool calls)."""
    role, parts = row.role, row.content
    if parts and len(parts) == 1 and (role == "user" or (role == "assistant" and not row.tool_calls)):
        part = parts[0]  # the common row: one text part, no tool calls, no thinking
        if part.get("type") == "text":
            text = str(part.get("text", ""))
            if role == "user" or text:
                out.append(_named({"role": role, "content": text}, row))
            return
    if role == "tool":
        out.extend(_tool_messages(row))
    elif role == "user":
        out.append(_named({"role": "user", "content": user_content(parts)}, row))
    elif role in ("assistant", "approval"):
        text = text_parts(parts)
        tool_calls = row.tool_calls
        if not tool_calls:
            if role == "assistant" and text:
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if echo and (reasoning := reasoning_text(parts)):
                    message[REASONING_CONTENT] = reasoning
                out.append(_with_thinking(_named(message, row), row))
            return  # approval responses are represented by the tool rows that follow them
        content = None if in_args or not text or (scrub and role == "assistant") else text
        calls = _wire_calls(tool_calls, in_args, parts)
        last = out[-1] if out else None
        if role == "approval" and last is not None and last["role"] == "assistant" and last.get("tool_calls"):
            # A mixed response was stored as an assistant row plus an approval row; the model made it as
            # one message, and the tool returns that follow answer both rows' calls.
            out[-1] = {**last, "tool_calls": [*last["tool_calls"], *calls]}
            return
        message = {"role": "assistant", "content": content, "tool_calls": calls}
        if echo:
            message[REASONING_CONTENT] = reasoning_text(parts)
        out.append(_with_thinking(_named(message, row), row))
    elif role == "summary":
        out.append(_named({"role": "user", "content": text_parts(parts)}, row))
    elif role == "system":  # several text parts are joined by blank lines, as Letta joins them
        text = "\n\n".join(str(p.get("text", "")) for p in parts or [] if p.get("type") == "text")
        out.append(_named({"role": "system", "content": text}, row))


def request_messages(
    system_text: str,
    buffer: Sequence[dict[str, Any]],
    *,
    system_role: str = "system",
    tool_return_limit: int | None = None,
) -> list[dict[str, Any]]:
    """The system prompt, then `buffer` (from `buffer_messages`) with system messages in `system_role` and tool
    returns cut to `tool_return_limit`. A changed message is a new dict: `buffer` is left as it was."""
    out: list[dict[str, Any]] = [{"role": system_role, "content": system_text}]
    if system_role == "system" and tool_return_limit is None:
        out.extend(buffer)
        return out
    out.extend(request_form(message, system_role, tool_return_limit) for message in buffer)
    return out


def request_form(message: dict[str, Any], system_role: str, tool_return_limit: int | None) -> dict[str, Any]:
    """One buffer message as `request_messages` sends it: a system message in `system_role`, a tool return cut to
    `tool_return_limit`; a changed message is a new dict, an unchanged one the same."""
    role = message["role"]
    if role == "system" and system_role != "system":
        return {**message, "role": system_role}
    if role == "tool" and tool_return_limit is not None:
        parts = message.get(TOOL_RESULT_PARTS_KEY)
        long_parts = parts is not None and any(len(p.get("text", "")) > tool_return_limit for p in parts)
        if len(message["content"]) > tool_return_limit or long_parts:
            cut = {**message, "content": truncate_return(message["content"], tool_return_limit)}
            if parts is not None:
                cut[TOOL_RESULT_PARTS_KEY] = [_cut_part(p, tool_return_limit) for p in parts]
            return cut
    return message


def _cut_part(part: dict[str, Any], limit: int) -> dict[str, Any]:
    return {**part, "text": truncate_return(part["text"], limit)} if part.get("type") == "text" else part


def prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Our estimate of a request's prompt size, compared against the context window."""
    return count_message_tokens(messages) + count_tools_tokens(tools)
