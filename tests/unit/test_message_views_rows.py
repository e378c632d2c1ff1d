"""Stored tool-return, user, approval and summary rows → public LettaMessages."""

import json

from memlet.messages.content import (
    ImageContent,
    TextContent,
    UrlImage,
)
from memlet.messages.packing import (
    format_local_time,
    pack_heartbeat,
    pack_tool_return,
    pack_user_message,
    parse_tool_return,
)
from memlet.messages.schemas import (
    ApprovalReturn,
    MessageRole,
    StoredMessage,
    StoredToolReturn,
)
from memlet.messages.views import row_to_letta_messages, to_letta_messages
from tests.unit.message_view_support import MSG_ID, NOW, _tool_call


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
