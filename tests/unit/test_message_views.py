"""Stored rows → public LettaMessages, checked against responses captured from Letta 0.16.8: the samples, otids and type filters."""

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from memlet.messages.content import (
    TextContent,
)
from memlet.messages.packing import (
    pack_tool_return,
)
from memlet.messages.schemas import (
    LettaResponse,
    LettaStopReason,
    LettaUsageStatistics,
    MessageRole,
    OpenAIToolCall,
    StopReasonType,
    StoredMessage,
    StoredToolReturn,
    ToolCallFunction,
)
from memlet.messages.views import filter_message_types, otid_from_id, row_to_letta_messages, to_letta_messages
from tests.shared_paths import SAMPLES
from tests.unit.message_view_support import MSG_ID, NOW


def _sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def _created(date: str) -> datetime:
    # Stored timestamps have microseconds; the public view must drop them.
    return datetime.fromisoformat(date) + timedelta(microseconds=734_211)


def _row_from_view(view: dict[str, Any]) -> StoredMessage:
    """The stored row Letta would have held for one public message of the samples."""
    common = {
        "id": view["id"],
        "created_at": _created(view["date"]),
        "step_id": view["step_id"],
        "run_id": view["run_id"],
        "agent_id": "agent-1d1ff1b3-6cf6-4b22-ac35-10ba953d7730",
    }
    kind = view["message_type"]
    if kind in ("system_message", "user_message"):
        role = MessageRole.system if kind == "system_message" else MessageRole.user
        return StoredMessage(**common, role=role, otid=view["otid"], content=[TextContent(text=view["content"])])
    if kind == "assistant_message":
        return StoredMessage(**common, role=MessageRole.assistant, content=[TextContent(text=view["content"])])
    if kind == "tool_call_message":
        calls = [
            OpenAIToolCall(id=c["tool_call_id"], function=ToolCallFunction(name=c["name"], arguments=c["arguments"]))
            for c in view["tool_calls"]
        ]
        return StoredMessage(**common, role=MessageRole.assistant, content=[], tool_calls=calls)
    assert kind == "tool_return_message"
    packed = pack_tool_return(True, view["tool_return"], now=NOW)
    return StoredMessage(
        **common,
        role=MessageRole.tool,
        name=view["name"],
        content=[TextContent(text=packed)],
        tool_call_id=view["tool_call_id"],
        tool_returns=[StoredToolReturn(tool_call_id=view["tool_call_id"], status="success", func_response=packed)],
    )


def _dump(messages: list[Any]) -> list[dict[str, Any]]:
    return [message.model_dump(mode="json") for message in messages]


class TestSamples:
    def test_list_messages_match_letta_exactly(self) -> None:
        expected = _sample("list_messages.json")
        rows = [_row_from_view(view) for view in expected]

        views = to_letta_messages(rows, use_assistant_message=True, text_is_assistant=True)

        assert _dump(views) == expected

    def test_run_messages_match_letta_exactly(self) -> None:
        expected = _sample("run_messages.json")
        views = to_letta_messages([_row_from_view(v) for v in expected], text_is_assistant=True)
        assert _dump(views) == expected

    @pytest.mark.parametrize("name", ["letta_response.json", "letta_response_tool_call.json"])
    def test_send_response_matches_letta_exactly(self, name: str) -> None:
        expected = _sample(name)
        rows = [_row_from_view(view) for view in expected["messages"]]

        # The V3 loop converts its new messages with use_assistant_message off and text as the reply.
        messages = to_letta_messages(rows, use_assistant_message=False, text_is_assistant=True)
        response = LettaResponse(
            messages=messages,
            stop_reason=LettaStopReason(stop_reason=StopReasonType.end_turn),
            usage=LettaUsageStatistics.model_validate(expected["usage"]),
        )

        assert response.model_dump(mode="json") == expected

    def test_sse_assistant_event_is_byte_identical(self) -> None:
        line = next(
            line.removeprefix("data: ")
            for line in (SAMPLES / "sse.txt").read_text().splitlines()
            if line.startswith("data: ") and '"message-88507caf' in line
        )
        row = _row_from_view(json.loads(line))

        [view] = row_to_letta_messages(row, text_is_assistant=True)

        assert json.dumps(view.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False) == line


class TestOtid:
    @pytest.mark.parametrize(
        ("message_id", "index", "otid"),
        [
            ("message-0314f300-45c8-40ac-aa76-7f0f2c8f4864", 0, "0314f300-45c8-40ac-aa76-7f0f2c8f4800"),
            ("message-4fd4e061-c0aa-4176-a3a3-7466234fb6bd", 0, "4fd4e061-c0aa-4176-a3a3-7466234fb680"),
            ("message-4fd4e061-c0aa-4176-a3a3-7466234fb6bd", 5, "4fd4e061-c0aa-4176-a3a3-7466234fb685"),
            (MSG_ID, -1, MSG_ID),
        ],
    )
    def test_low_seven_bits_hold_the_index(self, message_id: str, index: int, otid: str) -> None:
        assert otid_from_id(message_id, index) == otid

    def test_index_out_of_range(self) -> None:
        with pytest.raises(ValueError, match="between 0 and 127"):
            otid_from_id(MSG_ID, 128)


class TestFilter:
    def test_keeps_listed_types_in_order(self) -> None:
        rows = [_row_from_view(v) for v in _sample("list_messages.json")]
        views = to_letta_messages(rows, text_is_assistant=True)

        kept = filter_message_types(views, ["assistant_message", "tool_return_message"])

        assert kept == [v for v in views if v.message_type in ("assistant_message", "tool_return_message")]
        assert len(kept) == 7
        assert filter_message_types(views, None) == views
