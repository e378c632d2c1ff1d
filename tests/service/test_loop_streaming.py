"""stream_tokens: the TokenDelta sequence, and that every fragment's message_id / otid equal those of the rows the
step then commits and of their public views (SSE clients concatenate fragments by otid).

V2 agents (memgpt_v2_agent, memgpt_agent) stream the parsed tool arguments: `thinking` as reasoning,
send_message's `message` as assistant text, other calls' arguments without `thinking`."""

import json
from typing import Any

import pytest

from memlet.loop.events import MessagesCommitted, RunFinished, TokenDelta
from memlet.loop.response import previous_message_id
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


def assert_content_before(fragments: list[TokenDelta], view: Any) -> None:
    """A response's text or thinking streamed under the step's assistant id, stored on the approval row whose id
    is the one before it (as Letta streams and stores a response whose calls all wait for approval)."""
    assert fragments and view.step_id
    assert {(previous_message_id(f.message_id), f.step_id) for f in fragments} == {(view.id, view.step_id)}


def assert_labels(fragments: list[TokenDelta], view: Any) -> None:
    """Every fragment carries the id, otid and step id of the public message it builds."""
    assert fragments and view.step_id
    assert {(f.message_id, f.otid, f.step_id) for f in fragments} == {(view.id, view.otid, view.step_id)}


# Parallel tool calls on: the model may return several calls in one response.
PARALLEL = {"parallel_tool_calls": True}


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
        # As Letta streams it, the text carries the step's assistant id; the one approval row it is stored on has
        # the id before it.
        assert_content_before(deltas(out, "assistant"), text_view)

    async def test_mixed_response_fragments_follow_the_split(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(llm=PARALLEL, custom_tools=[GATED])
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

    async def test_gated_call_before_an_ungated_one_carries_the_stored_requests_id(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        # Letta labels a gated call's fragments with the assistant id minus one, as it stores the request, whatever
        # comes after it in the response.
        agent = await loop_env.agent(llm=PARALLEL, custom_tools=[GATED])
        mock_llm.script(
            Reply.tool_calls(Call("launch", {}, id="call_g"), Call("conversation_search", {"query": "x"}, id="call_u"))
        )
        out = await loop_env.send(agent, "launch and search", stream_tokens=True)
        assert shape(out) == ["approval", "tool_call", "committed", "finished"]
        call_view, request_view = views(committed(out))
        assert request_view.message_type == "approval_request_message"
        assert_labels(deltas(out, "approval"), request_view)
        assert_labels(deltas(out, "tool_call"), call_view)
        assert request_view.id == previous_message_id(call_view.id)


V2_TYPES = ["memgpt_v2_agent", "memgpt_agent"]
# Newlines, quotes, backslashes and non-ASCII text: the mock sends json.dumps (\uXXXX escapes) in 8-char slices.
THOUGHT = 'The user said "hi"\nso I greet back \\o/ \u2014 caf\u00e9 \U0001f600.'
REPLY = 'Hello "friend"!\nNice to meet you \u263a'


def joined(fragments: list[TokenDelta]) -> str:
    return "".join(f.text for f in fragments)


def reasoning_views(rows: list[Any]) -> list[Any]:
    return [v for v in views(rows, v2=True) if v.message_type == "reasoning_message"]


class TestV2ParsedArguments:
    @pytest.mark.parametrize("agent_type", V2_TYPES)
    async def test_send_message_streams_thinking_then_the_message(
        self, loop_env: LoopEnv, mock_llm, agent_type: str
    ) -> None:
        agent = await loop_env.agent(agent_type=agent_type)
        mock_llm.script(Reply.tool_call("send_message", {"thinking": THOUGHT, "message": REPLY}))
        out = await loop_env.send(agent, "hello", stream_tokens=True)
        assert shape(out) == ["reasoning", "assistant", "committed", "finished"]
        thoughts, text = deltas(out, "reasoning"), deltas(out, "assistant")
        assert len(thoughts) > 1 and len(text) > 1
        assert joined(thoughts) == THOUGHT
        assert joined(text) == REPLY
        thinking_view, message_view = views(committed(out), v2=True)
        assert (thinking_view.reasoning, message_view.content) == (THOUGHT, REPLY)
        assert_labels(thoughts, thinking_view)
        assert_labels(text, message_view)
        assert thinking_view.otid != message_view.otid

    async def test_native_reasoning_comes_before_the_thinking(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        args = {"thinking": "short thought", "message": "Hi!"}
        mock_llm.script(Reply.tool_call("send_message", args, reasoning="model reasoning here"))
        out = await loop_env.send(agent, "hello", stream_tokens=True)
        native_view, thinking_view, message_view = views(committed(out), v2=True)
        reasoning = deltas(out, "reasoning")
        assert_labels([f for f in reasoning if f.otid == native_view.otid], native_view)
        assert joined([f for f in reasoning if f.otid == native_view.otid]) == "model reasoning here"
        assert joined([f for f in reasoning if f.otid == thinking_view.otid]) == "short thought"
        assert {f.otid for f in reasoning} == {native_view.otid, thinking_view.otid}
        assert_labels(deltas(out, "assistant"), message_view)
        assert joined(deltas(out, "assistant")) == "Hi!"

    async def test_message_before_thinking_still_matches(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        raw = json.dumps({"message": REPLY, "thinking": THOUGHT})
        mock_llm.script(Reply.tool_call("send_message", raw))
        out = await loop_env.send(agent, "hello", stream_tokens=True)
        assert shape(out) == ["assistant", "reasoning", "committed", "finished"]
        thinking_view, message_view = views(committed(out), v2=True)
        assert_labels(deltas(out, "reasoning"), thinking_view)
        assert_labels(deltas(out, "assistant"), message_view)
        assert (joined(deltas(out, "reasoning")), joined(deltas(out, "assistant"))) == (THOUGHT, REPLY)

    async def test_empty_thinking_is_not_a_part(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "", "message": "Hi!"}))
        out = await loop_env.send(agent, "hello", stream_tokens=True)
        assert shape(out) == ["assistant", "committed", "finished"]
        (message_view,) = views(committed(out), v2=True)
        assert_labels(deltas(out, "assistant"), message_view)

    @pytest.mark.parametrize("agent_type", V2_TYPES)
    async def test_other_tools_stream_arguments_without_thinking(
        self, loop_env: LoopEnv, mock_llm, agent_type: str
    ) -> None:
        agent = await loop_env.agent(agent_type=agent_type)
        args = {"thinking": THOUGHT, "query": "green tea", "request_heartbeat": True}
        mock_llm.script(
            Reply.tool_call("conversation_search", args, id="call_s"),
            Reply.tool_call("send_message", {"thinking": "done", "message": "Found nothing."}),
        )
        out = await loop_env.send(agent, "search", stream_tokens=True)
        assert shape(out) == [
            "reasoning",
            "tool_call",
            "committed",
            "reasoning",
            "assistant",
            "committed",
            "finished",
        ]
        first = committed(out, 0)
        thinking_view, call_view, _return_view, *_heartbeat = views(first, v2=True)
        calls = deltas(out, "tool_call")
        head, rest = calls[0], calls[1:]
        assert (head.name, head.tool_call_id, head.arguments) == ("conversation_search", "call_s", None)
        assert rest and all(f.name is None and f.tool_call_id == "call_s" for f in rest)
        streamed = json.loads("".join(f.arguments or "" for f in rest))
        assert streamed == {"query": "green tea", "request_heartbeat": True}
        assert streamed == json.loads(call_view.tool_call.arguments)
        assert_labels(calls, call_view)
        step_thoughts = [f for f in deltas(out, "reasoning") if f.message_id == first[0].id]
        assert_labels(step_thoughts, thinking_view)
        assert joined(step_thoughts) == thinking_view.reasoning == THOUGHT
        later_thinking, reply_view = views(committed(out, 1), v2=True)
        assert_labels([f for f in deltas(out, "reasoning") if f.message_id != first[0].id], later_thinking)
        assert_labels(deltas(out, "assistant"), reply_view)

    async def test_gated_call_streams_thinking_and_an_approval_request(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", custom_tools=[GATED])
        mock_llm.script(Reply.tool_call("launch", {"thinking": "launch it", "request_heartbeat": False}, id="call_g"))
        out = await loop_env.send(agent, "launch", stream_tokens=True)
        assert shape(out) == ["reasoning", "approval", "committed", "finished"]
        thinking_view, request_view = views(committed(out), v2=True)
        assert request_view.message_type == "approval_request_message"
        assert_content_before(deltas(out, "reasoning"), thinking_view)
        assert joined(deltas(out, "reasoning")) == "launch it"
        approvals = deltas(out, "approval")
        assert_labels(approvals, request_view)
        assert approvals[0].name == "launch"
        arguments = json.loads("".join(f.arguments or "" for f in approvals))
        assert "thinking" not in arguments
        stored = json.loads(request_view.tool_call.arguments)
        # As in Letta, a waiting V2 call keeps whether the model asked for a heartbeat (it decides what follows).
        assert stored.pop("request_heartbeat") is False
        assert arguments == stored

    async def test_two_calls_in_one_response_keep_only_the_first(self, loop_env: LoopEnv, mock_llm) -> None:
        # Letta's V2 loop runs one call per step: a second call in the same response is dropped, not stored.
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(
            Reply.tool_calls(
                Call("conversation_search", {"thinking": "look first", "query": "tea"}, id="call_s"),
                Call("send_message", {"message": "Searching."}, id="call_m"),
            )
        )
        out = await loop_env.send(agent, "tea?", stream_tokens=True)
        assistant = committed(out)[0]
        assert [c.id for c in assistant.tool_calls] == ["call_s"]
        thinking_view, call_view = [v for v in views(committed(out), v2=True) if v.id == assistant.id]
        assert_labels(deltas(out, "reasoning"), thinking_view)
        assert_labels(deltas(out, "tool_call"), call_view)
