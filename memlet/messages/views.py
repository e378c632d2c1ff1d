"""Stored messages → the public ``LettaMessage`` union (what every message list, send and stream returns).

One stored row can become several public messages: an assistant row with reasoning and tool calls yields a
``reasoning_message`` then a ``tool_call_message``, all sharing the row's ``id``. Each gets its own ``otid``:
the row uuid with its low 7 bits replaced by the part's index (``otid_from_id``), which is also how streamed
parts are labelled, so a client can match token deltas with the messages it lists later.

Tool results, heartbeats and system alerts are stored as packed JSON (``packing.py``); the public view unpacks
tool results and legacy user messages and shows heartbeats and alerts raw.
"""

import json
from collections.abc import Iterable, Sequence
from enum import Enum, auto
from typing import Any, Literal

from memlet.messages.content import (
    ImageContent,
    OmittedReasoningContent,
    ReasoningContent,
    RedactedReasoningContent,
    SummarizedReasoningContent,
    TextContent,
    tool_return_to_text,
)
from memlet.messages.packing import (
    Status,
    dumps_indented,
    extract_compaction_stats,
    parse_tool_return,
    unpack_user_message,
)
from memlet.messages.schemas import (
    ApprovalRequestMessage,
    ApprovalResponseMessage,
    ApprovalReturn,
    AssistantMessage,
    HiddenReasoningMessage,
    LettaMessage,
    MessageRole,
    MessageType,
    OpenAIToolCall,
    ReasoningMessage,
    StoredMessage,
    StoredToolReturn,
    SummaryMessage,
    SystemMessage,
    ToolCall,
    ToolCallMessage,
    ToolReturn,
    ToolReturnMessage,
    UserMessage,
)

# --- otids -------------------------------------------------------------------------------------------------


def otid_from_id(message_id: str, index: int) -> str:
    """The otid of the ``index``-th public part of a stored message: its uuid with the low 7 bits = index.

    ``index == -1`` returns the id itself (approval requests use their id as otid).
    """
    if index == -1:
        return message_id
    if not 0 <= index < 128:
        raise ValueError("Index must be between 0 and 127")
    value = int(message_id.removeprefix("message-").replace("-", ""), 16)
    digits = f"{(value & ~0x7F) | index:032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


# --- stored → public ---------------------------------------------------------------------------------------


def to_letta_messages(
    messages: Sequence[StoredMessage],
    *,
    use_assistant_message: bool = True,
    assistant_message_tool_name: str = "send_message",
    assistant_message_tool_kwarg: str = "message",
    text_is_assistant: bool,
    include_err: bool | None = None,
    summary_as_user: bool = True,
) -> list[LettaMessage]:
    """Public views of stored rows, in the rows' order (pass rows oldest first for history listings).

    - ``use_assistant_message``: ``send_message``-style calls become ``assistant_message``; their tool returns
      are dropped when the calling row is among ``messages``.
    - ``text_is_assistant``: assistant text is the reply (letta_v1_agent) rather than inner thoughts (V2 agents).
    - ``include_err`` is accepted for parity; Letta 0.16.8 ignores it too, so errored rows are always shown.
    - ``summary_as_user``: summary rows show as ``user_message`` (Letta always does this for stored history).
    """
    del include_err
    rows: Iterable[StoredMessage] = messages
    if use_assistant_message:
        rows = _drop_assistant_tool_returns(messages, assistant_message_tool_name)
    views: list[LettaMessage] = []
    for row in rows:
        views.extend(
            row_to_letta_messages(
                row,
                use_assistant_message=use_assistant_message,
                assistant_message_tool_name=assistant_message_tool_name,
                assistant_message_tool_kwarg=assistant_message_tool_kwarg,
                text_is_assistant=text_is_assistant,
                summary_as_user=summary_as_user,
            )
        )
    return views


def is_heartbeat(row: StoredMessage) -> bool:
    """Whether a row is a loop's heartbeat (a user row packed as ``{"type": "heartbeat", ...}``)."""
    if row.role != MessageRole.user:
        return False
    text = _text_of(row)
    if '"heartbeat"' not in text:
        return False
    try:
        packed = json.loads(text)
    except ValueError:
        return False
    return isinstance(packed, dict) and packed.get("type") == "heartbeat"


def filter_message_types(
    messages: Sequence[LettaMessage], include_return_message_types: Sequence[MessageType | str] | None
) -> list[LettaMessage]:
    """Keep only the listed ``message_type`` values; ``None`` keeps everything."""
    if include_return_message_types is None:
        return list(messages)
    wanted = {str(kind) for kind in include_return_message_types}
    return [message for message in messages if message.message_type in wanted]


def _drop_assistant_tool_returns(messages: Sequence[StoredMessage], tool_name: str) -> list[StoredMessage]:
    # A send_message return ("None") is noise once the call is shown as assistant text.
    callers = {
        call.id: row
        for row in messages
        if row.role == MessageRole.assistant and row.tool_calls
        for call in row.tool_calls
    }

    def hidden(row: StoredMessage) -> bool:
        caller = callers.get(row.tool_call_id or "") if row.role == MessageRole.tool else None
        return caller is not None and any(call.function.name == tool_name for call in caller.tool_calls or [])

    return [row for row in messages if not hidden(row)]


def row_to_letta_messages(
    row: StoredMessage,
    *,
    use_assistant_message: bool = False,
    assistant_message_tool_name: str = "send_message",
    assistant_message_tool_kwarg: str = "message",
    text_is_assistant: bool = False,
    summary_as_user: bool = True,
) -> list[LettaMessage]:
    """The public views of one stored row, in display order."""
    role = row.role
    if role == MessageRole.assistant:
        views = _content_views(row, text_is_assistant) if row.content else []
        if row.tool_calls is not None:
            views += _tool_call_views(
                row, len(views), use_assistant_message, assistant_message_tool_name, assistant_message_tool_kwarg
            )
        return views
    if role == MessageRole.approval:
        views = _content_views(row, text_is_assistant) if row.content else []
        views.append(approval_request_view(row) if row.tool_calls else _approval_response(row))
        return views
    if role in (MessageRole.tool, MessageRole.function):
        return [_tool_return_view(row)]
    if role == MessageRole.user:
        return [_user_view(row)]
    if role == MessageRole.system:
        return [SystemMessage(**_fields(row, row.otid, err=False), content=_text_of(row))]
    return [_summary_view(row, summary_as_user)]


def _fields(
    row: StoredMessage, otid: str | None, *, sender: bool = True, err: bool = True, name: bool = True
) -> dict[str, Any]:
    # Letta fills sender_id/is_err/name on most views but not all of them; keep its choices so lists match.
    return {
        "id": row.id,
        "date": row.created_at,
        "name": row.name if name else None,
        "otid": otid,
        "sender_id": row.sender_id if sender else None,
        "step_id": row.step_id,
        "is_err": row.is_err if err else None,
        "run_id": row.run_id,
    }


def _text_of(row: StoredMessage) -> str:
    parts = row.content or []
    if len(parts) == 1 and isinstance(parts[0], TextContent):
        return parts[0].text
    return "".join(part.text for part in parts if isinstance(part, TextContent))


def _content_views(row: StoredMessage, text_is_assistant: bool) -> list[LettaMessage]:
    views: list[LettaMessage] = []
    for part in row.content or []:
        otid = otid_from_id(row.id, len(views))
        last = views[-1] if views else None
        if isinstance(part, TextContent) and text_is_assistant:
            if isinstance(last, AssistantMessage) and isinstance(last.content, str):
                last.content += part.text
            else:
                views.append(AssistantMessage(**_fields(row, otid), content=part.text))
        elif isinstance(part, TextContent):
            views.append(ReasoningMessage(**_fields(row, otid), reasoning=part.text))
        elif isinstance(part, ReasoningContent):
            if isinstance(last, ReasoningMessage):
                last.reasoning += part.reasoning
            else:
                views.append(_native_reasoning(row, otid, part.reasoning, part.signature))
        elif isinstance(part, SummarizedReasoningContent):
            text = part.combined_text()
            if text is not None:
                views.append(_native_reasoning(row, otid, text, part.encrypted_content))
        elif isinstance(part, RedactedReasoningContent):
            views.append(HiddenReasoningMessage(**_fields(row, otid), state="redacted", hidden_reasoning=part.data))
        elif isinstance(part, OmittedReasoningContent):
            views.append(HiddenReasoningMessage(**_fields(row, otid, sender=False), state="omitted"))
    return views


def _native_reasoning(row: StoredMessage, otid: str, text: str, signature: str | None) -> ReasoningMessage:
    fields = _fields(row, otid, sender=False)
    return ReasoningMessage(**fields, source="reasoner_model", reasoning=text, signature=signature)


def _public_call(call: OpenAIToolCall) -> ToolCall:
    return ToolCall(name=call.function.name, arguments=call.function.arguments, tool_call_id=call.id)


def _tool_call_views(
    row: StoredMessage, start: int, use_assistant_message: bool, tool_name: str, kwarg: str
) -> list[LettaMessage]:
    calls = row.tool_calls or []
    views: list[LettaMessage] = []
    pending: list[ToolCall] = []

    def flush() -> None:
        if pending:
            fields = _fields(row, otid_from_id(row.id, start + len(views)))
            views.append(ToolCallMessage(**fields, tool_call=pending[0], tool_calls=list(pending)))
            pending.clear()

    for call in calls:
        # Computed before any flush, so a send_message right after other calls shares their otid (as in Letta).
        otid = otid_from_id(row.id, start + len(views))
        text = _assistant_text(call, kwarg) if use_assistant_message and call.function.name == tool_name else None
        if text is None:
            pending.append(_public_call(call))
            continue
        flush()
        if text is not _Arg.MISSING:
            views.append(AssistantMessage(**_fields(row, otid), content=text))
    flush()
    return views


class _Arg(Enum):
    MISSING = auto()


def _assistant_text(call: OpenAIToolCall, kwarg: str) -> str | Literal[_Arg.MISSING] | None:
    """The message argument of a send_message call as text.

    ``_Arg.MISSING`` when the argument is absent (Letta then shows nothing for the call); None when the
    arguments are not a JSON object, in which case the call is shown as an ordinary tool call.
    """
    try:
        args = json.loads(call.function.arguments, strict=False)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    if kwarg not in args:
        return _Arg.MISSING
    value = args[kwarg]
    if isinstance(value, str):
        return value
    if value is None:
        return "None"
    if isinstance(value, dict):
        return dumps_indented(value)
    return str(value)


def _tool_return_view(row: StoredMessage) -> ToolReturnMessage:
    returns = [_public_return(row, stored) for stored in row.tool_returns or []]
    if not returns:
        # Rows written before tool_returns existed keep the packed result as their only text part.
        message, status = parse_tool_return(_text_of(row))
        returns = [ToolReturn(tool_return=message, status=status, tool_call_id=row.tool_call_id or "")]
    first = returns[0]
    text = first.tool_return if isinstance(first.tool_return, str) else tool_return_to_text(first.tool_return)
    return ToolReturnMessage(
        **_fields(row, otid_from_id(row.id, 0)),
        tool_return=text or "",
        status=first.status,
        tool_call_id=first.tool_call_id,
        stdout=first.stdout,
        stderr=first.stderr,
        tool_returns=returns,
    )


def _public_return(row: StoredMessage, stored: StoredToolReturn) -> ToolReturn:
    message, status = parse_tool_return(stored.func_response)
    # The status shown is the one packed with the result, not the stored column (they agree in practice).
    value = stored.func_response if isinstance(stored.func_response, list) else message
    call_id = stored.tool_call_id if stored.tool_call_id is not None else row.tool_call_id
    return ToolReturn(
        tool_return=value,
        status=status,
        tool_call_id=str(call_id or ""),
        stdout=stored.stdout,
        stderr=stored.stderr,
    )


def approval_request_view(row: StoredMessage) -> ApprovalRequestMessage:
    """An approval row (role `approval` with tool calls) as its `approval_request_message`."""
    calls = [_public_call(call) for call in row.tool_calls or []]
    fields = _fields(row, row.otid, err=False)
    return ApprovalRequestMessage(**fields, tool_call=calls[0], tool_calls=calls)


def _approval_response(row: StoredMessage) -> ApprovalResponseMessage:
    fields = {"id": row.id, "date": row.created_at, "otid": row.otid, "run_id": row.run_id}
    if row.approvals:
        items: list[ApprovalReturn | ToolReturn] = []
        for item in row.approvals:
            if isinstance(item, StoredToolReturn):
                message, _ = parse_tool_return(item.func_response)
                item_status: Status = item.status
                call_id = str(item.tool_call_id or "")
                items.append(
                    ToolReturn(
                        tool_return=message,
                        status=item_status,
                        tool_call_id=call_id,
                        stdout=item.stdout,
                        stderr=item.stderr,
                    )
                )
            else:
                items.append(item)
        first = next((item for item in items if isinstance(item, ApprovalReturn)), None)
        return ApprovalResponseMessage(
            **fields,
            approvals=items,
            approve=first.approve if first else None,
            approval_request_id=first.tool_call_id if first else None,
            reason=first.reason if first else None,
        )
    legacy = []
    if row.approval_request_id is not None and row.approve is not None:
        legacy = [ApprovalReturn(tool_call_id=row.approval_request_id, approve=row.approve, reason=row.denial_reason)]
    return ApprovalResponseMessage(
        **fields,
        approvals=legacy,
        approve=row.approve,
        approval_request_id=row.approval_request_id,
        reason=row.denial_reason,
    )


def _user_view(row: StoredMessage) -> UserMessage:
    parts = row.content or []
    content: str | list[TextContent | ImageContent]
    if len(parts) == 1 and isinstance(parts[0], TextContent):
        content = unpack_user_message(parts[0].text)
    elif parts:
        content = [part for part in parts if isinstance(part, TextContent | ImageContent)]
    else:
        content = ""
    return UserMessage(**_fields(row, row.otid), content=content)


def _summary_view(row: StoredMessage, as_user: bool) -> UserMessage | SummaryMessage:
    packed = _text_of(row)
    # Only packed *user* messages are unwrapped, so a summary (a system_alert) is shown as its raw JSON.
    summary = unpack_user_message(packed)
    if as_user:
        return UserMessage(**_fields(row, row.otid), content=summary)
    return SummaryMessage(
        **_fields(row, row.otid, sender=False, err=False, name=False),
        summary=summary,
        compaction_stats=extract_compaction_stats(packed),
    )
