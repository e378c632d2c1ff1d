"""Stored rows → public LettaMessages, checked against responses captured from Letta 0.16.8."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlet.messages.content import (
    ImageContent,
    OmittedReasoningContent,
    ReasoningContent,
    RedactedReasoningContent,
    SummarizedReasoningContent,
    SummarizedReasoningContentPart,
    TextContent,
    UrlImage,
)
from memlet.messages.packing import (
    format_local_time,
    pack_heartbeat,
    pack_system_alert,
    pack_tool_return,
    pack_user_message,
    parse_tool_return,
)
from memlet.messages.schemas import (
    ApprovalReturn,
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

NOW = datetime(2026, 11, 22, 3, 3, 38, 512345, tzinfo=UTC)
MSG_ID = "message-54ac6e05-90c9-4cbd-88a8-2492d965d727"


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


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> OpenAIToolCall:
    return OpenAIToolCall(id=call_id, function=ToolCallFunction(name=name, arguments=json.dumps(arguments)))


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


class TestAssistantRows:
    def _v2_row(self) -> StoredMessage:
        return StoredMessage(
            id=MSG_ID,
            role=MessageRole.assistant,
            created_at=NOW,
            content=[TextContent(text="User said hi, I should greet.")],
            tool_calls=[_tool_call("call_1", "send_message", {"message": "Hello!", "request_heartbeat": False})],
        )

    def test_v2_inner_thoughts_and_send_message(self) -> None:
        views = row_to_letta_messages(self._v2_row(), use_assistant_message=True)

        assert [v.message_type for v in views] == ["reasoning_message", "assistant_message"]
        reasoning, reply = (v.model_dump(mode="json") for v in views)
        assert reasoning["reasoning"] == "User said hi, I should greet."
        assert reasoning["source"] == "non_reasoner_model"
        assert reasoning["signature"] is None
        assert reply["content"] == "Hello!"
        assert reasoning["id"] == reply["id"] == MSG_ID
        assert reasoning["otid"] == otid_from_id(MSG_ID, 0)
        assert reply["otid"] == otid_from_id(MSG_ID, 1)
        assert reasoning["date"] == "2026-11-22T03:03:38+00:00"

    def test_send_message_as_tool_call_without_assistant_mode(self) -> None:
        views = row_to_letta_messages(self._v2_row(), use_assistant_message=False)

        assert [v.message_type for v in views] == ["reasoning_message", "tool_call_message"]
        call = views[1].model_dump(mode="json")
        assert call["tool_call"] == {
            "name": "send_message",
            "arguments": '{"message": "Hello!", "request_heartbeat": false}',
            "tool_call_id": "call_1",
        }
        assert call["tool_calls"] == [call["tool_call"]]

    def test_send_message_return_hidden_only_in_assistant_mode(self) -> None:
        tool_row = StoredMessage(
            role=MessageRole.tool,
            name="send_message",
            tool_call_id="call_1",
            content=[TextContent(text=pack_tool_return(True, None, now=NOW))],
        )
        rows = [self._v2_row(), tool_row]

        shown = to_letta_messages(rows, text_is_assistant=False)
        raw = to_letta_messages(rows, use_assistant_message=False, text_is_assistant=False)

        assert [v.message_type for v in shown] == ["reasoning_message", "assistant_message"]
        assert [v.message_type for v in raw] == ["reasoning_message", "tool_call_message", "tool_return_message"]
        assert raw[2].model_dump()["tool_return"] == "None"

    def test_non_string_send_message_argument(self) -> None:
        row = StoredMessage(
            role=MessageRole.assistant,
            tool_calls=[_tool_call("call_1", "send_message", {"message": {"a": 1}})],
        )
        [view] = row_to_letta_messages(row, use_assistant_message=True)
        assert view.model_dump()["content"] == '{\n  "a": 1\n}'

    def test_send_message_without_its_argument_is_dropped(self) -> None:
        row = StoredMessage(role=MessageRole.assistant, tool_calls=[_tool_call("c", "send_message", {"x": 1})])
        assert row_to_letta_messages(row, use_assistant_message=True) == []

    def test_v3_text_parts_merge_into_one_reply(self) -> None:
        row = StoredMessage(
            id=MSG_ID, role=MessageRole.assistant, content=[TextContent(text="Hel"), TextContent(text="lo")]
        )
        [view] = row_to_letta_messages(row, text_is_assistant=True)
        assert view.model_dump()["content"] == "Hello"
        assert view.otid == otid_from_id(MSG_ID, 0)

    def test_native_reasoning_then_tool_call(self) -> None:
        row = StoredMessage(
            id=MSG_ID,
            role=MessageRole.assistant,
            sender_id="agent-x",
            content=[
                ReasoningContent(is_native=True, reasoning="step one, ", signature="sig"),
                ReasoningContent(is_native=True, reasoning="step two"),
                RedactedReasoningContent(data="xxx"),
                OmittedReasoningContent(),
            ],
            tool_calls=[_tool_call("call_9", "memory_insert", {"label": "human"})],
        )

        views = [v.model_dump(mode="json") for v in row_to_letta_messages(row, text_is_assistant=True)]

        assert [v["message_type"] for v in views] == [
            "reasoning_message",
            "hidden_reasoning_message",
            "hidden_reasoning_message",
            "tool_call_message",
        ]
        assert views[0]["reasoning"] == "step one, step two"
        assert views[0]["source"] == "reasoner_model"
        assert views[0]["signature"] == "sig"
        assert views[0]["sender_id"] is None  # Letta leaves sender_id off native reasoning
        assert views[1]["state"] == "redacted"
        assert views[1]["hidden_reasoning"] == "xxx"
        assert views[1]["sender_id"] == "agent-x"
        assert views[2]["state"] == "omitted"
        assert views[2]["hidden_reasoning"] is None
        assert [v["otid"] for v in views] == [otid_from_id(MSG_ID, i) for i in range(4)]

    def test_summarized_reasoning(self) -> None:
        part = SummarizedReasoningContent(
            id="rs_1",
            summary=[
                SummarizedReasoningContentPart(index=0, text="first"),
                SummarizedReasoningContentPart(index=1, text=""),
                SummarizedReasoningContentPart(index=2, text="second"),
            ],
            encrypted_content="enc",
        )
        row = StoredMessage(role=MessageRole.assistant, content=[part])
        [view] = row_to_letta_messages(row, text_is_assistant=True)
        assert view.model_dump()["reasoning"] == "first\n\nsecond"
        assert view.model_dump()["signature"] == "enc"

    def test_mixed_calls_group_around_send_message(self) -> None:
        row = StoredMessage(
            id=MSG_ID,
            role=MessageRole.assistant,
            tool_calls=[
                _tool_call("c1", "memory_insert", {}),
                _tool_call("c2", "send_message", {"message": "done"}),
                _tool_call("c3", "conversation_search", {}),
            ],
        )

        views = row_to_letta_messages(row, use_assistant_message=True)

        assert [v.message_type for v in views] == ["tool_call_message", "assistant_message", "tool_call_message"]
        # Letta numbers the send_message before flushing the calls before it, so those two share an otid.
        assert [v.otid for v in views] == [otid_from_id(MSG_ID, i) for i in (0, 0, 2)]

    def test_is_err_shown_only_when_true(self) -> None:
        failed = StoredMessage(role=MessageRole.assistant, content=[TextContent(text="x")], is_err=True)
        normal = failed.model_copy(update={"is_err": False})
        assert row_to_letta_messages(failed, text_is_assistant=True)[0].model_dump()["is_err"] is True
        assert row_to_letta_messages(normal, text_is_assistant=True)[0].model_dump()["is_err"] is None


class TestToolReturns:
    def test_error_status_and_stdout(self) -> None:
        packed = pack_tool_return(False, "boom", now=NOW)
        row = StoredMessage(
            role=MessageRole.tool,
            name="my_tool",
            tool_call_id="call_2",
            content=[TextContent(text=packed)],
            tool_returns=[
                StoredToolReturn(
                    tool_call_id="call_2", status="error", func_response=packed, stdout=["out"], stderr=["err"]
                )
            ],
        )

        view = row_to_letta_messages(row)[0].model_dump(mode="json")

        assert view["tool_return"] == "boom"
        assert view["status"] == "error"
        assert view["stdout"] == ["out"]
        assert view["stderr"] == ["err"]
        assert view["tool_returns"] == [
            {
                "type": "tool",
                "tool_return": "boom",
                "status": "error",
                "tool_call_id": "call_2",
                "stdout": ["out"],
                "stderr": ["err"],
            }
        ]

    def test_legacy_row_without_tool_returns(self) -> None:
        row = StoredMessage(
            role=MessageRole.tool, tool_call_id="call_3", content=[TextContent(text=pack_tool_return(True, "ok"))]
        )
        view = row_to_letta_messages(row)[0].model_dump()
        assert (view["tool_return"], view["status"], view["tool_call_id"]) == ("ok", "success", "call_3")

    def test_multimodal_return_keeps_parts_and_flattens_the_mirror(self) -> None:
        parts = [TextContent(text="a chart"), ImageContent(source=UrlImage(url="http://x/img.png"))]
        row = StoredMessage(
            role=MessageRole.tool,
            tool_call_id="c",
            tool_returns=[StoredToolReturn(tool_call_id="c", status="success", func_response=parts)],
        )
        view = row_to_letta_messages(row)[0].model_dump(mode="json")
        assert view["tool_return"] == "a chart [Image omitted]"
        assert view["tool_returns"][0]["tool_return"][1]["source"] == {"type": "url", "url": "http://x/img.png"}

    def test_dict_result_is_shown_as_python_repr(self) -> None:
        assert parse_tool_return(pack_tool_return(True, {"k": "v"})) == ("{'k': 'v'}", "success")

    def test_unpacked_text_passes_through(self) -> None:
        assert parse_tool_return("plain words") == ("plain words", "success")


class TestUserRows:
    def test_packed_user_message_is_unwrapped(self) -> None:
        row = StoredMessage(role=MessageRole.user, content=[TextContent(text=pack_user_message("hi", now=NOW))])
        assert row_to_letta_messages(row)[0].model_dump()["content"] == "hi"

    def test_heartbeat_is_shown_raw(self) -> None:
        packed = pack_heartbeat("[This is an automated system message hidden from the user] Continuing.", now=NOW)
        row = StoredMessage(role=MessageRole.user, content=[TextContent(text=packed)])
        assert row_to_letta_messages(row)[0].model_dump()["content"] == packed

    def test_multimodal_content_stays_a_list(self) -> None:
        row = StoredMessage(
            role=MessageRole.user,
            content=[TextContent(text="look"), ImageContent(source=UrlImage(url="http://x/a.png"))],
        )
        content = row_to_letta_messages(row)[0].model_dump(mode="json")["content"]
        assert content == [
            {"type": "text", "text": "look", "signature": None},
            {"type": "image", "source": {"type": "url", "url": "http://x/a.png"}},
        ]


class TestApprovals:
    def test_request_uses_its_id_as_otid(self) -> None:
        row = StoredMessage(
            id=MSG_ID,
            otid=MSG_ID,
            role=MessageRole.approval,
            step_id="step-1",
            tool_calls=[_tool_call("call_a", "rm_rf", {"path": "/"}), _tool_call("call_b", "ls", {})],
            tool_call_id="call_a",
        )

        view = row_to_letta_messages(row)[0].model_dump(mode="json")

        assert view["message_type"] == "approval_request_message"
        assert view["otid"] == view["id"] == MSG_ID
        assert view["tool_call"]["tool_call_id"] == "call_a"
        assert [c["name"] for c in view["tool_calls"]] == ["rm_rf", "ls"]

    def test_response_with_mirrors(self) -> None:
        row = StoredMessage(
            role=MessageRole.approval,
            step_id="step-1",
            approvals=[
                ApprovalReturn(tool_call_id="call_a", approve=False, reason="no"),
                StoredToolReturn(tool_call_id="call_b", status="success", func_response=pack_tool_return(True, "42")),
            ],
        )

        view = row_to_letta_messages(row)[0].model_dump(mode="json")

        assert view["message_type"] == "approval_response_message"
        assert view["step_id"] is None  # Letta does not carry it onto approval responses
        assert (view["approve"], view["approval_request_id"], view["reason"]) == (False, "call_a", "no")
        assert view["approvals"] == [
            {"type": "approval", "tool_call_id": "call_a", "approve": False, "reason": "no"},
            {
                "type": "tool",
                "tool_return": "42",
                "status": "success",
                "tool_call_id": "call_b",
                "stdout": None,
                "stderr": None,
            },
        ]

    def test_response_from_legacy_columns(self) -> None:
        row = StoredMessage(role=MessageRole.approval, approve=True, approval_request_id="call_a")
        view = row_to_letta_messages(row)[0].model_dump()
        assert view["approvals"] == [{"type": "approval", "tool_call_id": "call_a", "approve": True, "reason": None}]
        assert view["approve"] is True


class TestSummaryRows:
    def _row(self) -> StoredMessage:
        packed = json.dumps(
            {
                "type": "system_alert",
                "message": "Note: prior messages have been hidden.",
                "time": format_local_time(now=NOW),
                "compaction_stats": {
                    "trigger": "post_step_context_check",
                    "context_window": 8000,
                    "messages_count_before": 40,
                    "messages_count_after": 12,
                },
            }
        )
        return StoredMessage(role=MessageRole.summary, content=[TextContent(text=packed)])

    def test_shown_as_user_message_with_raw_json(self) -> None:
        row = self._row()
        [view] = to_letta_messages([row], text_is_assistant=True)
        assert view.message_type == "user_message"
        assert view.model_dump()["content"] == row.content[0].text  # type: ignore[index,union-attr]

    def test_structured_summary(self) -> None:
        [view] = row_to_letta_messages(self._row(), summary_as_user=False)
        data = view.model_dump(mode="json")
        assert data["message_type"] == "summary_message"
        assert data["compaction_stats"]["messages_count_after"] == 12
        assert data["compaction_stats"]["context_tokens_before"] is None


class TestFilter:
    def test_keeps_listed_types_in_order(self) -> None:
        rows = [_row_from_view(v) for v in _sample("list_messages.json")]
        views = to_letta_messages(rows, text_is_assistant=True)

        kept = filter_message_types(views, ["assistant_message", "tool_return_message"])

        assert kept == [v for v in views if v.message_type in ("assistant_message", "tool_return_message")]
        assert len(kept) == 7
        assert filter_message_types(views, None) == views


class TestPacking:
    def test_tool_return_exact_text(self) -> None:
        assert pack_tool_return(True, "Bob likes go.", now=NOW) == (
            '{\n  "status": "OK",\n  "message": "Bob likes go.",\n  "time": "2026-11-22 03:03:38 AM UTC+0000"\n}'
        )

    def test_time_in_agent_timezone(self) -> None:
        assert format_local_time("America/Los_Angeles", NOW) == "2026-11-21 07:03:38 PM PST-0800"

    def test_system_alert_is_compact_and_not_packed_twice(self) -> None:
        packed = pack_system_alert("Ünïcode", now=NOW)
        assert packed == (
            '{"type": "system_alert", "message": "\\u00dcn\\u00efcode", "time": "2026-11-22 03:03:38 AM UTC+0000"}'
        )
        assert pack_system_alert(packed, now=NOW) == packed
