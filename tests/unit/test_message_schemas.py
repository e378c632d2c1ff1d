"""Request parsing and response serialization of the messages API, against Letta 0.16.8's behaviour."""

import json
import re
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from memlet.errors import BadRequestError, UnprocessableError
from memlet.messages.content import Base64Image, ImageContent, TextContent
from memlet.messages.requests import (
    ApprovalCreate,
    ConversationMessageRequest,
    LettaAsyncRequest,
    LettaRequest,
    LettaStreamingRequest,
    MessageCreate,
    ToolReturnCreate,
    ensure_messages,
    ensure_streaming_options,
)
from memlet.messages.schemas import (
    ApprovalReturn,
    LettaErrorMessage,
    LettaMessage,
    LettaMessageUpdate,
    LettaPing,
    LettaResponse,
    LettaStopReason,
    LettaUsageStatistics,
    MessageType,
    StopReasonType,
    StoredMessage,
    StoredToolReturn,
    ToolCallDelta,
    ToolCallMessage,
    UpdateAssistantMessage,
    UpdateReasoningMessage,
    run_status_for,
)
from tests.shared_paths import SAMPLES


def _sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class TestLettaRequest:
    def test_sample_body_and_defaults(self) -> None:
        request = LettaStreamingRequest.model_validate(_sample("send_message_request.json"))

        [message] = request.messages or []
        assert isinstance(message, MessageCreate)
        assert (message.type, message.role, message.content) == ("message", "user", "hello again")
        assert message.otid  # generated when missing
        assert request.max_steps == 50
        assert request.use_assistant_message is True
        assert request.assistant_message_tool_name == "send_message"
        assert request.assistant_message_tool_kwarg == "message"
        assert request.include_return_message_types is None
        assert (request.streaming, request.stream_tokens, request.include_pings, request.background) == (
            False,
            False,
            True,
            False,
        )

    def test_client_otid_is_kept(self) -> None:
        request = LettaRequest.model_validate({"messages": [{"role": "user", "content": "x", "otid": "abc"}]})
        assert request.messages is not None
        assert request.messages[0].otid == "abc"

    def test_item_type_is_inferred(self) -> None:
        request = LettaRequest.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"type": None, "role": "user", "content": "explicit null"},
                    {"approve": False, "approval_request_id": "call_1", "reason": "no"},
                    {"tool_returns": [{"tool_return": "4", "status": "success", "tool_call_id": "call_2"}]},
                ]
            }
        )

        kinds = [type(item) for item in request.messages or []]
        assert kinds == [MessageCreate, MessageCreate, ApprovalCreate, ToolReturnCreate]

    def test_deprecated_approval_form_becomes_approvals(self) -> None:
        request = LettaRequest.model_validate({"messages": [{"approve": False, "approval_request_id": "call_1"}]})
        approval = (request.messages or [])[0]
        assert isinstance(approval, ApprovalCreate)
        assert approval.approvals == [ApprovalReturn(tool_call_id="call_1", approve=False)]

    def test_approvals_mix_approval_and_client_tool_results(self) -> None:
        request = LettaRequest.model_validate(
            {
                "messages": [
                    {
                        "type": "approval",
                        "approvals": [
                            {"type": "approval", "tool_call_id": "call_1", "approve": True},
                            {"type": "tool", "tool_call_id": "call_2", "tool_return": "ok", "status": "success"},
                        ],
                    }
                ]
            }
        )
        approval = (request.messages or [])[0]
        assert isinstance(approval, ApprovalCreate)
        assert [item.type for item in approval.approvals or []] == ["approval", "tool"]

    def test_input_string_is_one_user_message(self) -> None:
        request = LettaRequest.model_validate({"input": "hello"})
        [message] = request.messages or []
        assert isinstance(message, MessageCreate)
        assert (message.role, message.content) == ("user", "hello")

    def test_input_parts(self) -> None:
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
        request = LettaAsyncRequest.model_validate({"input": [{"type": "text", "text": "see"}, image]})
        [message] = request.messages or []
        assert isinstance(message, MessageCreate)
        assert message.content == [
            TextContent(text="see"),
            ImageContent(source=Base64Image(media_type="image/png", data="AAAA")),
        ]

    def test_both_input_and_messages(self) -> None:
        with pytest.raises(
            ValidationError, match=re.escape("Cannot specify both 'input' and 'messages'. Use one or the other.")
        ):
            LettaRequest.model_validate({"input": "a", "messages": [{"role": "user", "content": "b"}]})

    def test_neither_input_nor_messages(self) -> None:
        with pytest.raises(ValidationError, match=re.escape("Must specify either 'input' or 'messages'.")):
            LettaRequest.model_validate({})

    def test_unknown_role_rejected(self) -> None:
        with pytest.raises(ValidationError):
            LettaRequest.model_validate({"messages": [{"role": "tool", "content": "x"}]})

    def test_unknown_message_type_filter_rejected(self) -> None:
        with pytest.raises(ValidationError):
            LettaRequest.model_validate({"input": "x", "include_return_message_types": ["nope"]})

    def test_system_alias_and_filters(self) -> None:
        request = LettaRequest.model_validate(
            {"input": "x", "system": "You are terse.", "include_return_message_types": ["assistant_message"]}
        )
        assert request.override_system == "You are terse."
        assert request.include_return_message_types == [MessageType.assistant_message]

    def test_conversation_request_streams_by_default(self) -> None:
        assert ConversationMessageRequest.model_validate({"input": "x"}).streaming is True


class TestRouteChecks:
    def test_empty_messages(self) -> None:
        request = LettaStreamingRequest.model_validate({"messages": []})
        with pytest.raises(UnprocessableError) as caught:
            ensure_messages(request)
        assert caught.value.status_code == 422
        assert caught.value.body() == {"detail": "Messages must not be empty"}

    def test_non_empty_messages_pass(self) -> None:
        ensure_messages(LettaRequest.model_validate({"input": " "}))
        ensure_messages(LettaRequest.model_validate({"input": [{"type": "text", "text": ""}]}))  # Letta's rule too

    def test_an_empty_content_is_letta_400(self) -> None:
        with pytest.raises(BadRequestError) as caught:
            ensure_messages(LettaRequest.model_validate({"input": ""}))
        assert caught.value.status_code == 400
        assert caught.value.body() == {"detail": "Message content is empty or invalid"}

    def test_stream_options_without_streaming(self) -> None:
        request = LettaStreamingRequest.model_validate(
            {"input": "x", "stream_tokens": True, "include_pings": False, "background": True}
        )
        with pytest.raises(UnprocessableError) as caught:
            ensure_streaming_options(request)
        assert caught.value.message == (
            "Streaming options set without streaming enabled. stream_tokens can only be true when streaming=true; "
            "include_pings can only be set to false when streaming=true; background can only be true when "
            "streaming=true. Either set streaming=true or use default values for streaming options."
        )

    def test_stream_options_with_streaming_pass(self) -> None:
        request = LettaStreamingRequest.model_validate({"input": "x", "streaming": True, "stream_tokens": True})
        ensure_streaming_options(request)


class TestResponseRoundTrip:
    @pytest.mark.parametrize("name", ["letta_response.json", "letta_response_tool_call.json"])
    def test_letta_response(self, name: str) -> None:
        sample = _sample(name)
        assert LettaResponse.model_validate(sample).model_dump(mode="json") == sample

    @pytest.mark.parametrize("name", ["list_messages.json", "run_messages.json"])
    def test_message_lists(self, name: str) -> None:
        sample = _sample(name)
        adapter = TypeAdapter(list[LettaMessage])
        assert adapter.dump_python(adapter.validate_python(sample), mode="json") == sample

    def test_sse_events_are_byte_identical(self) -> None:
        adapter: TypeAdapter[Any] = TypeAdapter(LettaMessage | LettaPing | LettaStopReason | LettaUsageStatistics)
        lines = [
            line.removeprefix("data: ")
            for line in (SAMPLES / "sse.txt").read_text().splitlines()
            if line.startswith("data: {")
        ]
        assert len(lines) > 10
        for line in lines:
            event = adapter.validate_json(line)
            assert _compact(adapter.dump_python(event, mode="json")) == line

    def test_token_delta_drops_null_keys(self) -> None:
        message = ToolCallMessage(
            id="message-1",
            date="2026-11-22T03:03:46.123456Z",
            tool_call=ToolCallDelta(arguments='{"a"', tool_call_id="call_1"),
            tool_calls=ToolCallDelta(arguments='{"a"', tool_call_id="call_1"),
        )
        data = message.model_dump(mode="json")
        assert data["tool_call"] == data["tool_calls"] == {"arguments": '{"a"', "tool_call_id": "call_1"}
        assert data["date"] == "2026-11-22T03:03:46+00:00"
        assert data["otid"] is None  # the message's own nulls stay

    def test_error_message_keeps_nulls(self) -> None:
        error = LettaErrorMessage(run_id="run-1", error_type="llm_error", message="boom")
        assert error.model_dump(mode="json") == {
            "message_type": "error_message",
            "run_id": "run-1",
            "error_type": "llm_error",
            "message": "boom",
            "detail": None,
            "seq_id": None,
        }

    def test_ping(self) -> None:
        ping = LettaPing.create("run-1").model_dump(mode="json")
        assert ping["id"].startswith("ping-")
        assert ping["run_id"] == "run-1"
        assert ping["message_type"] == "ping"

    def test_usage_defaults(self) -> None:
        assert LettaUsageStatistics().model_dump() == {
            "message_type": "usage_statistics",
            "completion_tokens": 0,
            "prompt_tokens": 0,
            "total_tokens": 0,
            "step_count": 0,
            "run_ids": None,
            "cached_input_tokens": None,
            "cache_write_tokens": None,
            "reasoning_tokens": None,
            "context_tokens": None,
        }

    @pytest.mark.parametrize(
        ("reason", "status"),
        [
            (StopReasonType.end_turn, "completed"),
            (StopReasonType.requires_approval, "completed"),
            (StopReasonType.cancelled, "cancelled"),
            (StopReasonType.llm_api_error, "failed"),
            (StopReasonType.max_tokens_exceeded, "failed"),
        ],
    )
    def test_run_status(self, reason: StopReasonType, status: str) -> None:
        assert run_status_for(reason) == status


class TestStoredMessage:
    def test_from_orm_like_row(self) -> None:
        row = SimpleNamespace(
            id="message-0314f300-45c8-40ac-aa76-7f0f2c8f4864",
            role="approval",
            created_at="2026-11-22T03:03:34.561014Z",
            content=[{"type": "reasoning", "is_native": True, "reasoning": "hmm"}],
            tool_calls=None,
            approvals=[
                {"type": "approval", "tool_call_id": "c1", "approve": True, "reason": None},
                {"tool_call_id": "c2", "status": "error", "func_response": "x", "stdout": None, "stderr": None},
            ],
        )

        message = StoredMessage.model_validate(row, from_attributes=True)

        assert isinstance(message.approvals, list)
        assert isinstance(message.approvals[0], ApprovalReturn)
        assert isinstance(message.approvals[1], StoredToolReturn)

    def test_serializes_every_field_of_letta_message_schema(self) -> None:
        data = StoredMessage(role="user", content=[TextContent(text="hi")]).model_dump(mode="json")
        assert list(data) == [
            "created_by_id",
            "last_updated_by_id",
            "created_at",
            "updated_at",
            "id",
            "agent_id",
            "model",
            "role",
            "content",
            "name",
            "tool_calls",
            "tool_call_id",
            "step_id",
            "run_id",
            "otid",
            "tool_returns",
            "group_id",
            "sender_id",
            "batch_item_id",
            "conversation_id",
            "is_err",
            "approval_request_id",
            "approve",
            "denial_reason",
            "approvals",
        ]
        assert data["id"].startswith("message-")
        assert data["created_at"].endswith("Z")


class TestMessageUpdate:
    def test_discriminated_by_message_type(self) -> None:
        adapter: TypeAdapter[Any] = TypeAdapter(LettaMessageUpdate)
        assert isinstance(
            adapter.validate_python({"message_type": "assistant_message", "content": "x"}), UpdateAssistantMessage
        )
        assert isinstance(
            adapter.validate_python({"message_type": "reasoning_message", "reasoning": "r"}), UpdateReasoningMessage
        )
        with pytest.raises(ValidationError):
            adapter.validate_python({"message_type": "tool_call_message"})
