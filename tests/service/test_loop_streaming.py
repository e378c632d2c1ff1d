"""stream_tokens: the TokenDelta sequence, and that every fragment's message_id / otid equal those of the rows the
step then commits and of their public views (SSE clients concatenate fragments by otid)."""

import json
from typing import Any

from memlet.loop.events import MessagesCommitted, RunFinished, TokenDelta
from memlet.messages.views import to_letta_messages
from tests.mock_llm import Call, Reply
from tests.service.loop_factories import CustomTool, LoopEnv, Outcome, function_schema, loop_env

__all__ = ["loop_env"]

GATED = CustomTool(
    name="launch",
    source_code='def launch() -> str:\n    """Launch."""\n    return "launched"\n',
    json_schema=function_schema("launch", {}),
    default_requires_approval=True,
)


def shape(out: Outcome) -> list[str]:
    """The event kinds in order, runs of equal kinds collapsed: e.g. ["reasoning", "assistant", "committed"]."""
    kinds: list[str] = []
    for event in out.events:
        if isinstance(event, TokenDelta):
            kind = event.kind
        elif isinstance(event, MessagesCommitted):
            kind = "committed"
        else:
            kind = "finished"
        if not kinds or kinds[-1] != kind or kind == "committed":
            kinds.append(kind)
    return kinds


def deltas(out: Outcome, kind: str) -> list[TokenDelta]:
    return [e for e in out.events if isinstance(e, TokenDelta) and e.kind == kind]


def committed(out: Outcome, index: int = 0) -> list[Any]:
    return [e for e in out.events if isinstance(e, MessagesCommitted)][index].messages


def views(rows: list[Any], v2: bool = False) -> list[Any]:
    return to_letta_messages(rows, text_is_assistant=not v2)


def assert_labels(fragments: list[TokenDelta], view: Any) -> None:
    """Every fragment carries the id and otid of the public message it builds."""
    assert fragments
    assert {(f.message_id, f.otid) for f in fragments} == {(view.id, view.otid)}


class TestTextAndReasoning:
    async def test_reasoning_then_text_fragments_match_the_committed_views(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("Hello there, friend.", reasoning="The user greets me warmly."))
        out = await loop_env.send(agent, "hi", stream_tokens=True)
        assert shape(out) == ["reasoning", "assistant", "committed", "finished"]
        reasoning, text = deltas(out, "reasoning"), deltas(out, "assistant")
        assert len(reasoning) > 1 and len(text) > 1  # really fragments, not one piece
        assert "".join(f.text for f in reasoning) == "The user greets me warmly."
        assert "".join(f.text for f in text) == "Hello there, friend."
        reasoning_view, text_view = views(committed(out))
        assert (reasoning_view.message_type, text_view.message_type) == ("reasoning_message", "assistant_message")
        assert_labels(reasoning, reasoning_view)
        assert_labels(text, text_view)
        assert reasoning_view.otid != text_view.otid

    async def test_text_alone_uses_the_first_otid(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("Just text here."))
        out = await loop_env.send(agent, "hi", stream_tokens=True)
        (view,) = views(committed(out))
        assert_labels(deltas(out, "assistant"), view)

    async def test_without_stream_tokens_no_fragments(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("Hello there.", reasoning="hm"))
        out = await loop_env.send(agent, "hi")
        assert shape(out) == ["committed", "finished"]
        # The provider is still asked to stream (the loop collects the fragments itself).
        assert mock_llm.requests[-1].get("stream") is True


class TestToolCalls:
    async def test_name_first_then_argument_fragments_then_next_step(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        args = {"label": "human", "new_string": "Likes green tea very much."}
        mock_llm.script(
            Reply.tool_call("memory_insert", args, id="call_1", content="Let me note that."),
            Reply.text("Noted."),
        )
        out = await loop_env.send(agent, "I like tea", stream_tokens=True)
        assert shape(out) == ["assistant", "tool_call", "committed", "assistant", "committed", "finished"]
        assert isinstance(out.events[-1], RunFinished) and out.events[-1].stop_reason == "end_turn"
        calls = deltas(out, "tool_call")
        head, rest = calls[0], calls[1:]
        assert (head.name, head.tool_call_id, head.arguments) == ("memory_insert", "call_1", None)
        assert rest and all(f.name is None and f.tool_call_id == "call_1" and f.arguments for f in rest)
        assert json.loads("".join(f.arguments or "" for f in rest)) == args
        first_step = committed(out, 0)
        text_view, call_view, _return_view = views(first_step)
        assert call_view.message_type == "tool_call_message"
        step_text = [d for d in deltas(out, "assistant") if d.message_id == first_step[0].id]
        assert_labels(step_text, text_view)
        assert_labels(calls, call_view)
        # The second step's reply is a new message with its own id.
        (reply_view,) = views(committed(out, 1))
        later = [d for d in deltas(out, "assistant") if d.message_id != first_step[0].id]
        assert_labels(later, reply_view)

    async def test_call_without_text_uses_the_first_otid(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("none"))
        out = await loop_env.send(agent, "search", stream_tokens=True)
        call_view = views(committed(out, 0))[0]
        assert call_view.message_type == "tool_call_message"
        assert_labels(deltas(out, "tool_call"), call_view)

    async def test_v2_call_comes_after_the_stored_thinking(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "be brief", "message": "Hi!"}))
        out = await loop_env.send(agent, "hello", stream_tokens=True)
        thinking_view, message_view = views(committed(out), v2=True)
        assert (thinking_view.message_type, message_view.message_type) == ("reasoning_message", "assistant_message")
        assert_labels(deltas(out, "tool_call"), message_view)


class TestApprovalRequests:
    async def test_gated_call_fragments_carry_the_approval_requests_id(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[GATED])
        mock_llm.script(Reply.tool_call("launch", {}, id="call_g", content="Launching now."))
        out = await loop_env.send(agent, "launch", stream_tokens=True)
        assert shape(out) == ["assistant", "approval", "committed", "finished"]
        text_view, request_view = views(committed(out))
        assert request_view.message_type == "approval_request_message"
        assert request_view.otid == request_view.id
        assert_labels(deltas(out, "approval"), request_view)
        assert_labels(deltas(out, "assistant"), text_view)

    async def test_mixed_response_fragments_follow_the_split(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[GATED])
        mock_llm.script(
            Reply.tool_calls(
                Call("conversation_search", {"query": "x"}, id="call_u"),
                Call("launch", {}, id="call_g"),
            )
        )
        out = await loop_env.send(agent, "search and launch", stream_tokens=True)
        assert shape(out) == ["tool_call", "approval", "committed", "finished"]
        call_view, request_view = views(committed(out))
        assert (call_view.message_type, request_view.message_type) == (
            "tool_call_message",
            "approval_request_message",
        )
        assert_labels(deltas(out, "tool_call"), call_view)
        assert_labels(deltas(out, "approval"), request_view)
        assert {d.tool_call_id for d in deltas(out, "approval")} == {"call_g"}
