"""A turn's later step converts only the rows after those it already converted (`loop/buffer_chat.py`), and the
result is always the conversion of the whole list: reused messages are never changed, an approval row that
extends the message before it is converted again with it, and input rows (ORM entities) are never reused."""

from datetime import UTC, datetime
from typing import Any

import pytest

from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.llm.chat_format import buffer_messages, json_copy
from memlet.loop.buffer_chat import BufferChat

NOW = datetime(2026, 11, 23, tzinfo=UTC)
_counter = iter(range(10**6))


def row(role: str, text: str = "", **fields: Any) -> MessageRow:
    n = next(_counter)
    values: dict[str, Any] = dict.fromkeys(MessageRow._fields)
    content = [{"type": "text", "text": text}] if text else []
    values |= {"id": f"message-{n}", "agent_id": "agent-1", "sequence_id": n, "role": role, "content": content}
    values |= {"created_at": NOW, "updated_at": NOW, "organization_id": "org-1", "run_id": "run-1"} | fields
    return MessageRow(**values)


def call(call_id: str) -> list[dict[str, Any]]:
    return [{"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]


def check(chat: BufferChat, rows: list[Any], agent_type: str = "letta_v1_agent") -> list[dict[str, Any]]:
    got = chat.buffer(rows, agent_type)
    assert got == buffer_messages(rows, agent_type)
    return got


def test_rows_after_the_converted_ones_are_converted_alone() -> None:
    chat = BufferChat()
    loaded = [row("user", "hi"), row("assistant", "hello")]
    check(chat, [*loaded, row("user", "and?")])
    assert chat.rows_converted == 3
    check(chat, [*loaded, row("user", "and?"), row("assistant", "so")])  # new objects for the committed rows
    assert chat.rows_converted == 3 + 2
    assert chat.conversions == 2


def test_an_identical_list_is_not_converted_again() -> None:
    chat = BufferChat()
    rows = [row("user", "hi"), row("assistant", "hello")]
    first = check(chat, rows)
    assert chat.buffer(list(rows), "letta_v1_agent") is first
    assert chat.conversions == 1


@pytest.mark.parametrize("approval_last", [True, False])
def test_an_approval_that_extended_the_message_before_it_is_converted_again(approval_last: bool) -> None:
    chat = BufferChat()
    head = [row("user", "hi"), row("assistant", "two calls", tool_calls=call("call-a"))]
    approval = row("approval", tool_calls=call("call-b"))
    empty = row("assistant")  # adds no message: the approval after it still extends the call message
    old = [*head, approval] if approval_last else [*head, empty, approval]
    before = json_copy({"m": check(chat, old)})
    assert before["m"][-1]["tool_calls"][1]["id"] == "call-b"
    new = [*head, row("tool", "ok", tool_call_id="call-a")]
    got = check(chat, new)
    assert [c["id"] for c in got[1]["tool_calls"]] == ["call-a"]
    # The head's call message was converted again (the approval had extended it), not taken from `old`.
    assert chat.rows_converted == len(old) + 2
    assert chat.buffer(old, "letta_v1_agent") == before["m"]  # the earlier conversion was left as it was


def test_input_rows_are_not_reused_in_another_list() -> None:
    chat = BufferChat()
    loaded = [row("user", "hi")]
    pending = orm.Message(id="message-in", role="user", content=[{"type": "text", "text": "first"}])
    check(chat, [*loaded, pending])
    pending.content = [{"type": "text", "text": "changed"}]
    got = check(chat, [*loaded, pending, row("assistant", "ok")])
    assert got[1]["content"] == "changed"
    assert chat.rows_converted == 2 + 2


def test_each_mode_keeps_its_own_conversion() -> None:
    chat = BufferChat()
    rows = [row("user", "hi"), row("assistant", "thought", tool_calls=call("call-a"))]
    in_args = chat.buffer(rows, "memgpt_v2_agent", inner_thoughts_in_kwargs=True)
    in_content = chat.buffer(rows, "memgpt_v2_agent", inner_thoughts_in_kwargs=False)
    assert in_args != in_content
    assert chat.buffer(rows, "memgpt_v2_agent", inner_thoughts_in_kwargs=True) is in_args
    assert chat.conversions == 2


def test_an_approval_after_reused_rows_leaves_their_messages_as_they_were() -> None:
    chat = BufferChat()
    head = [row("user", "hi"), row("assistant", "two calls", tool_calls=call("call-a"))]
    first = check(chat, head)
    saved = json_copy({"m": first})
    got = check(chat, [*head, row("approval", tool_calls=call("call-b"))])
    assert [c["id"] for c in got[-1]["tool_calls"]] == ["call-a", "call-b"]
    assert chat.rows_converted == 3  # the head was reused
    assert {"m": first} == saved  # the earlier list (a request already built from it) was not changed
