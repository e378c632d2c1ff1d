"""Stored assistant rows → public LettaMessages: reasoning, assistant messages and tool calls."""

from memlet.messages.content import (
    OmittedReasoningContent,
    ReasoningContent,
    RedactedReasoningContent,
    SummarizedReasoningContent,
    SummarizedReasoningContentPart,
    TextContent,
)
from memlet.messages.packing import (
    pack_tool_return,
)
from memlet.messages.schemas import (
    MessageRole,
    StoredMessage,
)
from memlet.messages.views import otid_from_id, row_to_letta_messages, to_letta_messages
from tests.unit.message_view_support import MSG_ID, NOW, _tool_call


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
