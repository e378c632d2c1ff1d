"""A turn's later step converts only the rows after those it already converted (`loop/buffer_chat.py`), and the
result is always the conversion of the whole list: reused messages are never changed, an approval row that
extends the message before it is converted again with it, and input rows (ORM entities) are never reused."""

import gc
import tracemalloc
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.llm.anthropic_format import THINKING_BLOCKS_KEY
from memlet.llm.chat_format import buffer_messages, request_messages
from memlet.llm.tokens import count_message_tokens
from memlet.llm.tool_definitions import json_copy
from memlet.loop import buffer_chat
from memlet.loop.buffer_chat import BufferChat, Wire

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


def check_wire(chat: BufferChat, rows: list[Any], *, limit: int | None = None, role: str = "system") -> Wire:
    """The wire of `rows`: the request form of their conversion, each message's JSON as orjson encodes it."""
    wire = chat.wire(rows, "letta_v1_agent", system_role=role, tool_return_limit=limit)
    expected = request_messages(
        "sys", buffer_messages(rows, "letta_v1_agent"), system_role=role, tool_return_limit=limit
    )
    assert wire.messages == expected[1:]
    assert orjson.dumps(wire.fragments) == orjson.dumps(expected[1:])
    assert wire.json_length() == len(orjson.dumps(expected[1:]))
    return wire


def test_a_later_step_encodes_only_its_new_messages() -> None:
    chat = BufferChat()
    loaded = [row("user", "hi"), row("assistant", "hello"), row("user", "more")]
    check_wire(chat, loaded)
    assert chat.messages_encoded == 3
    check_wire(chat, [*loaded, row("assistant", "so"), row("user", "then")])
    assert chat.messages_encoded == 3 + 2
    # Another request form takes the JSON of the messages it leaves as they are from the messages' own form: only
    # "so" (a new row, which the own form has not encoded for this list) is encoded.
    check_wire(chat, [*loaded, row("assistant", "so")], limit=5)
    assert chat.messages_encoded == 3 + 2 + 1


def test_another_form_encodes_and_counts_only_the_messages_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[dict[str, Any]] = []
    real = buffer_chat.message_tokens
    monkeypatch.setattr(buffer_chat, "message_tokens", lambda message: counted.append(message) or real(message))
    chat = BufferChat()
    rows = [row("user", "hi"), row("assistant", "call", tool_calls=call("call-a"))]
    rows += [row("tool", "x" * 50, tool_call_id="call-a"), row("system", "a note")]
    own = check_wire(chat, rows)
    assert own.tokens() == count_message_tokens(own.messages)
    counted.clear()
    encoded = chat.messages_encoded
    limited = check_wire(chat, rows, limit=10, role="developer")
    assert chat.messages_encoded == encoded + 2  # the cut tool return and the renamed system message
    assert limited.fragments[0] is own.fragments[0] and limited.fragments[1] is own.fragments[1]
    assert limited.tokens() == count_message_tokens(limited.messages)
    assert counted == limited.messages[2:]  # the other two counts come from the own form


def test_the_wire_cuts_long_tool_returns_and_renames_system_messages() -> None:
    chat = BufferChat()
    rows = [row("user", "hi"), row("system", "a note"), row("assistant", "call", tool_calls=call("call-a"))]
    rows.append(row("tool", "x" * 50, tool_call_id="call-a"))
    wire = check_wire(chat, rows, limit=10, role="developer")
    assert wire.messages[1]["role"] == "developer"
    assert wire.messages[3]["content"].startswith("x" * 10 + "... [truncated 40 chars]")


def test_a_message_an_approval_extended_is_encoded_again() -> None:
    chat = BufferChat()
    head = [row("user", "hi"), row("assistant", "two calls", tool_calls=call("call-a"))]
    check_wire(chat, head)
    wire = check_wire(chat, [*head, row("approval", tool_calls=call("call-b"))])
    assert [c["id"] for c in wire.messages[-1]["tool_calls"]] == ["call-a", "call-b"]
    assert chat.messages_encoded == 2 + 1  # the call message, extended, is encoded anew; "hi" is reused


def test_signed_thinking_is_flagged() -> None:
    chat = BufferChat()
    signed = [{"type": "reasoning", "reasoning": "r", "signature": "sig"}, {"type": "text", "text": "ok"}]
    plain = [row("user", "hi"), row("assistant", "ok")]
    assert not chat.wire(plain, "letta_v1_agent").any_thinking()
    wire = chat.wire([*plain, row("assistant", content=signed)], "letta_v1_agent")
    assert wire.any_thinking() and THINKING_BLOCKS_KEY in wire.messages[-1]


def test_the_kept_json_takes_about_its_own_size() -> None:
    """Each kept encoding is a copy of exact size: orjson's result keeps the whole buffer it reserved (4 KB at least),
    which for a window of a few thousand short messages would be megabytes held by the window cache."""
    chat = BufferChat()
    rows = [row("user", f"hello {i}") for i in range(500)]
    chat.buffer(rows, "letta_v1_agent")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        wire = chat.wire(rows, "letta_v1_agent")
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < len(rows) * 400, held / len(rows)  # ~40 bytes of JSON and ~150 of objects and slots a message
    assert sum(wire.lengths) < len(rows) * 50


def test_token_counts_are_kept_and_only_new_messages_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[dict[str, Any]] = []
    real = buffer_chat.message_tokens

    def counting(message: dict[str, Any]) -> int:
        counted.append(message)
        return real(message)

    monkeypatch.setattr(buffer_chat, "message_tokens", counting)
    chat = BufferChat()
    system = {"role": "system", "content": "You are Sam, a helpful agent. " * 5}
    loaded = [row("user", "hi there " * 20), row("assistant", "", tool_calls=call("c-1")), row("tool", "ok " * 30)]
    wire = chat.wire(loaded, "letta_v1_agent")
    assert not counted  # nothing is counted until a count is asked for
    assert wire.tokens(system) == count_message_tokens([system, *wire.messages])
    assert len(counted) == 1 + len(wire.messages)
    counted.clear()
    assert wire.tokens(system) == count_message_tokens([system, *wire.messages])
    assert counted == [system]  # the buffer's counts are kept
    counted.clear()
    longer = chat.wire([*loaded, row("assistant", "so it goes " * 10)], "letta_v1_agent")
    summary = {"role": "user", "content": "what came before"}
    assert longer.tokens(system, summary) == count_message_tokens([system, summary, *longer.messages])
    # The earlier counts carry over to the next conversion: only its new message and the head are counted.
    assert sorted(map(repr, counted)) == sorted(map(repr, [system, summary, longer.messages[-1]]))
    # Another request form (the system role as `developer`) counts its own messages.
    developer = chat.wire([*loaded, row("system", "a note")], "letta_v1_agent", system_role="developer")
    assert developer.tokens() == count_message_tokens(developer.messages)
    assert developer.messages[-1]["role"] == "developer"
    assert Wire().tokens() == 0
