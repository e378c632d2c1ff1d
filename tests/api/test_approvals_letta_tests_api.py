"""Human in the loop as Letta 0.16.8's own integration tests and loops have it, where memlet's other approval tests
do not reach: applying the client's answers is the loop's first step of `max_steps` (V3 and V2), answers re-sent
after a full compaction are still recognised as applied (a keep-alive, not a 400), the deprecated single-call form
may name the request's message instead of its call, an answer with no approvals is Letta's 400, and a mixed answer's
returns come in Letta's order.
"""

import json
import uuid
from typing import Any

import pytest
from letta_client import APIError, Letta

from tests.api.test_approval_continuation_api import LOOKUP
from tests.mock_llm import Call, MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
SECRET = '''def get_secret_code_tool(input_text: str) -> str:
    """The secret code for a text.

    Args:
        input_text: The text to encode.
    """
    return "code-" + input_text
'''


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, *, agent_type: str = "letta_v1_agent") -> Any:
    gated = client.tools.create(source_code=SECRET, default_requires_approval=True)
    free = client.tools.create(source_code=LOOKUP)
    return client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        agent_type=agent_type,  # type: ignore[arg-type]
        tool_ids=[gated.id, free.id],
        memory_blocks=[{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}],
    )


def ask(client: Letta, mock_llm: MockLLM, agent_id: str, call_id: str, **args: Any) -> None:
    mock_llm.script(Reply.tool_call("get_secret_code_tool", {"input_text": "hello", **args}, id=call_id))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "the code?"}])
    assert response.stop_reason.stop_reason == "requires_approval"


def answer(call_id: str, approve: bool, reason: str | None = None) -> list[Any]:
    item = {"type": "approval", "tool_call_id": call_id, "approve": approve, "reason": reason}
    return [{"type": "approval", "approvals": [item]}]


def send(client: Letta, agent_id: str, messages: list[Any], *, stream: bool, **body: Any) -> tuple[list[str], str]:
    """The message types a client sees and the stop reason, blocking or streamed."""
    if not stream:
        response = client.agents.messages.create(agent_id, messages=messages, **body)
        return [m.message_type for m in response.messages], response.stop_reason.stop_reason
    chunks = list(client.agents.messages.stream(agent_id, messages=messages, **body))
    kinds = [str(c.message_type) for c in chunks if c.message_type not in ("ping", "usage_statistics")]
    stops = [c.stop_reason for c in chunks if c.message_type == "stop_reason"]
    assert kinds[-1] == "stop_reason" and len(stops) == 1
    return kinds[:-1], str(stops[0])


@pytest.mark.parametrize("stream", [False, True])
def test_v3_answers_are_the_only_step_max_steps_1_allows(client: Letta, mock_llm: MockLLM, stream: bool) -> None:
    agent = make_agent(client)
    ask(client, mock_llm, agent.id, "call_deny")
    mock_llm.script(Reply.text("I won't, then."))

    kinds, stop = send(client, agent.id, answer("call_deny", False, "not now"), stream=stream, max_steps=1)

    # As in Letta's V3 loop, the denial went on to a step that max_steps no longer allows: the model is not called.
    assert (kinds, stop) == (["tool_return_message"], "max_steps")
    assert len(mock_llm.requests) == 1
    history = [m.message_type for m in client.agents.messages.list(agent.id, limit=100).items]
    assert history[-2:] == ["approval_response_message", "tool_return_message"]
    assert client.agents.retrieve(agent.id).last_stop_reason == "max_steps"


def test_v3_answers_count_toward_max_steps(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    ask(client, mock_llm, agent.id, "call_ok")
    mock_llm.script(Reply.tool_call("lookup", {"topic": "tea"}, id="call_look"), Reply.text("Never reached."))

    kinds, stop = send(client, agent.id, answer("call_ok", True), stream=False, max_steps=2)

    # Step 0 ran the approved call, step 1 the model's lookup; then max_steps stops the turn.
    assert stop == "max_steps"
    assert kinds == ["tool_return_message", "tool_call_message", "tool_return_message"]
    assert len(mock_llm.requests) == 2
    sent = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(sent[-1]["content"])["message"] == "code-hello"


@pytest.mark.parametrize(
    ("approve", "stream", "expected"),
    [
        (True, False, "max_steps"),  # V2 `step()`: the final step's call stops the turn
        (True, True, "max_steps"),  # V2 `stream()`: the heartbeat asks to go on, the steps are used up
        (False, False, "end_turn"),  # V2 `step()` leaves a denial's stop reason unset: end_turn
        (False, True, "max_steps"),
    ],
)
def test_v2_answers_are_the_only_step_max_steps_1_allows(
    client: Letta, mock_llm: MockLLM, approve: bool, stream: bool, expected: str
) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    ask(client, mock_llm, agent.id, "call_v2", request_heartbeat=True)
    mock_llm.script(Reply.tool_call("send_message", {"message": "Never reached."}))

    kinds, stop = send(client, agent.id, answer("call_v2", approve, "no"), stream=stream, max_steps=1)

    assert stop == expected
    assert kinds == ["tool_return_message"]
    assert len(mock_llm.requests) == 1


def test_answers_resent_after_a_full_compaction_are_a_keep_alive(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    ask(client, mock_llm, agent.id, "call_once")
    mock_llm.script(Reply.text("The code is code-hello."))
    client.agents.messages.create(agent.id, messages=answer("call_once", True))
    mock_llm.script(Reply.text("Bob asked for a code and got it."))
    compacted = client.agents.messages.compact(agent.id, compaction_settings={"mode": "all"})
    assert compacted.num_messages_after == 2  # the system prompt and the summary
    mock_llm.reset()

    # Letta then looks for the answered calls in the whole history: the retry is recognised, not refused.
    mock_llm.script(Reply.text("Still here."))
    kinds, stop = send(client, agent.id, answer("call_once", True), stream=True)
    assert (kinds, stop) == (["assistant_message"], "end_turn")
    assert len(mock_llm.requests) == 1
    last = mock_llm.requests[0]["messages"][-1]
    assert last["role"] == "user" and "keep-alive" in json.dumps(last)
    history = client.agents.messages.list(agent.id, limit=100).items
    assert [m.tool_call_id for m in history if m.message_type == "tool_return_message"] == ["call_once"]

    # Answers to calls the history never answered still get Letta's 400.
    with pytest.raises(APIError, match="No tool call is currently awaiting approval") as raised:
        client.agents.messages.create(agent.id, messages=answer("call_other", True))
    assert getattr(raised.value, "status_code", None) == 400


@pytest.mark.parametrize("approve", [True, False])
def test_the_deprecated_form_may_name_the_request_message(client: Letta, mock_llm: MockLLM, approve: bool) -> None:
    # Older SDKs answered with `approve` and `approval_request_id` = the approval request's message id, which Letta
    # takes for the one call that message holds.
    agent = make_agent(client)
    ask(client, mock_llm, agent.id, "call_old")
    request_id = client.agents.retrieve(agent.id).message_ids[-1]
    mock_llm.script(Reply.text("Done."))

    legacy = {"type": "approval", "approve": approve, "approval_request_id": request_id, "reason": "not that one"}
    response = client.agents.messages.create(agent.id, messages=[legacy])

    assert response.stop_reason.stop_reason == "end_turn"
    returned = response.messages[0]
    assert returned.message_type == "tool_return_message" and returned.tool_call_id == "call_old"
    sent = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == ["call_old"]
    message = json.loads(sent[0]["content"])["message"]
    if approve:
        assert message == "code-hello"
    else:
        assert message == "Error: request to call tool denied. User reason: not that one"


def test_an_answer_with_no_approvals_is_refused(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    ask(client, mock_llm, agent.id, "call_empty")
    with pytest.raises(APIError, match="does not contain any approvals") as raised:
        client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": []}])
    assert getattr(raised.value, "status_code", None) == 400
    assert len(mock_llm.requests) == 1


def parallel_agent(client: Letta) -> Any:
    """An agent with the gated and the free tool and no tool rules, so the model may call several at once."""
    gated = client.tools.create(source_code=SECRET, default_requires_approval=True)
    free = client.tools.create(source_code=LOOKUP)
    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        include_base_tools=False,
        include_base_tool_rules=False,
        tool_ids=[gated.id, free.id],
        tool_rules=[],
    )
    return client.agents.update(agent.id, parallel_tool_calls=True)


def test_mismatched_ids_are_named_in_their_own_order(client: Letta, mock_llm: MockLLM) -> None:
    agent = parallel_agent(client)
    calls = [Call("get_secret_code_tool", {"input_text": t}, f"call_{t}") for t in ("b", "a")]
    mock_llm.script(Reply.tool_calls(*calls))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "codes"}])
    answers = [{"type": "approval", "tool_call_id": i, "approve": True} for i in ("call_a", "call_x")]
    expected = "Invalid tool call IDs. Expected '['call_b', 'call_a']', but received '['call_a', 'call_x']'."
    with pytest.raises(APIError) as raised:
        client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": answers}])
    assert getattr(raised.value, "status_code", None) == 400
    assert getattr(raised.value, "body", None) == {"detail": expected}


def test_a_mixed_answer_lists_returns_in_lettas_order(client: Letta, mock_llm: MockLLM) -> None:
    # Letta's parallel approval test: three gated calls and an ungated one in one response; the answers approve one,
    # deny one and return the third from the client, the ungated call ran with them.
    agent = parallel_agent(client)
    mock_llm.script(
        Reply.tool_calls(
            Call("get_secret_code_tool", {"input_text": "a"}, "call_yes"),
            Call("get_secret_code_tool", {"input_text": "b"}, "call_no"),
            Call("get_secret_code_tool", {"input_text": "c"}, "call_client"),
            Call("lookup", {"topic": "tea"}, "call_held"),
        )
    )
    asked = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "codes"}])
    assert [m.message_type for m in asked.messages] == ["tool_call_message", "approval_request_message"]

    mock_llm.script(Reply.text("Done."))
    answers = [
        {"type": "approval", "tool_call_id": "call_no", "approve": False, "reason": "not b"},
        {"type": "tool", "tool_call_id": "call_client", "tool_return": "client-c", "status": "success"},
        {"type": "approval", "tool_call_id": "call_yes", "approve": True},
    ]
    response = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": answers}])

    # The client's returns first, then the denials, then the calls that ran (approved, then the held one).
    returned = response.messages[0]
    order = ["call_client", "call_no", "call_yes", "call_held"]
    assert [r.tool_call_id for r in returned.tool_returns] == order
    assert [r.status for r in returned.tool_returns] == ["success", "error", "success", "success"]
    assert (returned.tool_call_id, returned.tool_return) == ("call_client", "client-c")
    assert [m["tool_call_id"] for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"] == order
    # The stored answers keep the client's order; the legacy fields show the first approval or denial among them.
    history = client.agents.messages.list(agent.id, limit=100).items
    response_message = next(m for m in history if m.message_type == "approval_response_message")
    assert [a.tool_call_id for a in response_message.approvals] == ["call_no", "call_client", "call_yes"]
    assert (response_message.approval_request_id, response_message.approve) == ("call_no", False)

    # Re-sent, the same answers are a keep-alive although the tool row also holds the held call's return (Letta
    # wanted exactly the answered ids there and refused the retry with a 400).
    mock_llm.script(Reply.text("Still here."))
    again = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": answers}])
    assert again.stop_reason.stop_reason == "end_turn"
    assert "keep-alive" in json.dumps(mock_llm.requests[2]["messages"][-1])


def test_a_retry_must_answer_exactly_the_applied_calls(client: Letta, mock_llm: MockLLM) -> None:
    # Letta's idempotency check (`validate_persisted_tool_call_ids`) takes a retry only when one recent tool message
    # returns exactly the calls it answers; re-sending some of the answers, or others beside them, is its 400, also
    # when it looks the answered calls up in the whole history after a full compaction.
    agent = parallel_agent(client)
    calls = [Call("get_secret_code_tool", {"input_text": t}, f"call_{t}") for t in ("a", "b")]
    mock_llm.script(Reply.tool_calls(*calls, Call("lookup", {"topic": "tea"}, "call_held")), Reply.text("Done."))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "codes"}])
    both = [{"type": "approval", "tool_call_id": i, "approve": True} for i in ("call_a", "call_b")]
    applied = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": both}])
    assert applied.stop_reason.stop_reason == "end_turn"
    detail = (
        "Cannot process approval response: No tool call is currently awaiting approval. Please send a regular "
        "message to interact with the agent."
    )
    extra = {"type": "approval", "tool_call_id": "call_x", "approve": True}
    for compacted in (False, True):
        if compacted:
            mock_llm.script(Reply.text("Codes were given."))
            client.agents.messages.compact(agent.id, compaction_settings={"mode": "all"})
        for answers in (both[:1], both[1:], [*both, extra]):
            with pytest.raises(APIError) as raised:
                client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": answers}])
            assert getattr(raised.value, "status_code", None) == 400
            assert getattr(raised.value, "body", None) == {"detail": detail}
        # The same answers, in any order, are still a keep-alive (the held call's return beside them: see README).
        asked = len(mock_llm.requests)
        mock_llm.script(Reply.text("Still here."))
        again = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": both[::-1]}])
        assert again.stop_reason.stop_reason == "end_turn" and len(mock_llm.requests) == asked + 1
        assert "keep-alive" in json.dumps(mock_llm.requests[-1]["messages"][-1])


def id_before(message_id: str) -> str:
    value = uuid.UUID(message_id.removeprefix("message-")).int - 1
    return f"message-{uuid.UUID(int=value)}"


@pytest.mark.parametrize("held", [False, True])
def test_a_streamed_request_carries_the_id_it_is_stored_under(client: Letta, mock_llm: MockLLM, held: bool) -> None:
    # Letta's streaming interfaces label a gated call's fragments with the assistant id minus one, and store the
    # request under that id, whatever else the response holds (here a gated call first, maybe an ungated one after).
    agent = parallel_agent(client)
    gated = Call("get_secret_code_tool", {"input_text": "a"}, "call_gated")
    calls = [gated, Call("lookup", {"topic": "tea"}, "call_held")] if held else [gated]
    mock_llm.script(Reply.tool_calls(*calls, content="Let me check."))
    chunks = list(
        client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "code?"}], stream_tokens=True)
    )
    texts = [c for c in chunks if c.message_type == "assistant_message"]
    requests = [c for c in chunks if c.message_type == "approval_request_message"]
    assert "".join(str(c.content) for c in texts) == "Let me check."  # streamed once, not again at the step's end
    assert len({c.id for c in texts}) == 1 and {c.id for c in requests} == {id_before(texts[0].id)}
    history = client.agents.messages.list(agent.id, limit=100).items
    stored = next(m for m in history if m.message_type == "approval_request_message")
    assert stored.id == requests[0].id and [c.tool_call_id for c in stored.tool_calls] == ["call_gated"]
