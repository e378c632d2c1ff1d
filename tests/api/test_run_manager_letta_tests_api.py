"""Letta's run manager and cancellation tests (tests/managers/test_run_manager.py, test_cancellation.py,
tests/test_run_status_conversion.py), as a user sees them through the API: the run list's status filter, a run's
`num_steps` against its steps, and what a cancel during a tool leaves on the run."""

import threading
import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import Call, MockLLM, Reply

BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]

NAP = '''def nap() -> str:
    """Sleep a while, then answer.
    """
    import time

    time.sleep(5)
    return "woke"
'''
SECRET = '''def get_secret_code_tool(input_text: str) -> str:
    """The secret code for a text.

    Args:
        input_text: The text to encode.
    """
    return "code-" + input_text
'''
DENIED = "Error: request to call tool denied. User reason: The user cancelled the request, so the tool call was denied."


def make_agent(client: Letta, **extra: Any) -> Any:
    return client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", memory_blocks=BLOCKS, **extra
    )  # type: ignore[arg-type]


def send(http: httpx.Client, agent_id: str, text: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


@pytest.mark.parametrize("path", ["/v1/runs/", "/v1/_internal_runs/"])
def test_a_status_that_is_not_a_run_status_is_a_400_naming_it(http: httpx.Client, path: str) -> None:
    # test_convert_statuses_to_enum_with_invalid_status / _case_sensitivity / _with_mixed_valid_invalid: Letta's
    # route turns each status into its RunStatus enum, and the ValueError is its 400.
    for statuses in (["bogus"], ["COMPLETED"], ["completed", "bogus"]):
        response = http.get(path, params={"statuses": statuses})
        assert response.status_code == 400, response.text
        assert response.json() == {"detail": f"'{statuses[-1]}' is not a valid RunStatus"}


def test_several_statuses_select_runs_in_any_of_them(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    # test_list_runs_with_multiple_statuses / _with_no_status_filter_returns_all
    agent = make_agent(client)
    mock_llm.script(Reply.text("fine"), Reply.error(500, times=10))
    done = send(http, agent.id, "one").json()["messages"][0]["run_id"]
    send(http, agent.id, "two")
    failed = next(r.id for r in client.runs.list(agent_id=agent.id).items if r.id != done)
    listed = client.runs.list(agent_id=agent.id, statuses=["completed", "failed"]).items
    assert {r.id for r in listed} == {done, failed}
    assert [r.id for r in client.runs.list(agent_id=agent.id, statuses=["failed", "failed"]).items] == [failed]
    assert client.runs.list(agent_id=agent.id, statuses=["created", "running"]).items == []
    assert len(client.runs.list(agent_id=agent.id).items) == 2


def test_a_failed_llm_call_is_one_of_the_runs_steps(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    # test_run_metrics_num_steps_tracking: Letta's num_steps is the number of steps stored for the run, the
    # step whose LLM call failed included.
    agent = make_agent(client)
    mock_llm.script(Reply.error(500, times=10))
    send(http, agent.id, "hi")
    (run,) = client.runs.list(agent_id=agent.id).items
    assert run.status == "failed" and run.stop_reason == "llm_api_error"
    steps = http.get(f"/v1/runs/{run.id}/steps").json()
    assert [(s["status"], s["stop_reason"]) for s in steps] == [("failed", "llm_api_error")]
    assert http.get(f"/v1/runs/{run.id}/metrics").json()["num_steps"] == 1


def test_a_cancel_during_a_tool_keeps_the_step_and_its_tokens(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    # test_cancellation_during_tool_execution: the step whose tool was running when the run was cancelled stays on
    # the run, and so do the tokens its LLM call used (memlet interrupts the tool, see the README).
    tool = client.tools.create(source_code=NAP)
    agent = make_agent(client, tool_ids=[tool.id])
    mock_llm.script(Reply.tool_call("nap", {}, id="call_nap"), Reply.text("rested"))
    sender = threading.Thread(target=send, args=(http, agent.id, "nap"))
    sender.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the tool is sleeping in its sandbox now
    [run_id] = client.agents.messages.cancel(agent.id)  # type: ignore[misc]
    sender.join(10)
    run = client.runs.retrieve(run_id)
    assert run.status == "cancelled" and run.stop_reason == "cancelled"
    (step,) = http.get(f"/v1/runs/{run_id}/steps").json()
    assert (step["status"], step["stop_reason"]) == ("failed", "cancelled")
    assert step["total_tokens"] > 0
    usage = http.get(f"/v1/runs/{run_id}/usage").json()
    assert usage["total_tokens"] == step["total_tokens"]
    assert http.get(f"/v1/runs/{run_id}/metrics").json()["num_steps"] == 1
    assert client.agents.retrieve(agent.id).last_stop_reason == "cancelled"
    # A second cancel of the ended run changes nothing (test_double_cancellation).
    assert http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [run_id]}).json() == {
        run_id: "cancelled"
    }
    assert client.runs.retrieve(run_id).completed_at == run.completed_at


def test_run_messages_pages_both_ways(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    # test_run_messages_pagination / _ordering: oldest first by default; `before` and `after` together give the
    # messages between. memlet reads the cursors in the sort order (see the README), so newest first, `after` the
    # last message of a page gives the next, older page and the SDK walks every message once.
    agent = make_agent(client, agent_type="letta_v1_agent")
    search = Reply.tool_call("conversation_search", {"query": "tea"})
    mock_llm.script(search, search, Reply.text("ok"))
    run_id = send(http, agent.id, "look twice").json()["messages"][0]["run_id"]
    ids = [m.id for m in client.runs.messages.list(run_id).items]
    assert len(ids) == 6  # the input, two calls with their returns, the reply
    between = client.runs.messages.list(run_id, before=ids[4], after=ids[0]).items
    assert [m.id for m in between] == ids[1:4]
    assert [m.id for m in client.runs.messages.list(run_id, limit=2).items] == ids[:2]
    assert [m.id for m in client.runs.messages.list(run_id, order="desc", limit=2).items] == ids[:3:-1]
    assert [m.id for m in client.runs.messages.list(run_id, order="desc", limit=2)] == ids[::-1]
    assert [m.id for m in client.runs.messages.list(run_id, order="desc", after=ids[3]).items] == ids[2::-1]


def test_a_cancel_denies_every_pending_parallel_call_in_one_tool_message(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    # test_parallel_tool_calling_cancellation_with_denials: three calls wait for approval when the run is
    # cancelled; as Letta's cancel stores them, an approval response and one tool message with a denied return
    # per call follow, the run is cancelled and the agent answers its next message.
    gated = client.tools.create(source_code=SECRET, default_requires_approval=True)
    agent = client.agents.create(
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        agent_type="letta_v1_agent",
        include_base_tools=False,
        tool_ids=[gated.id],
    )
    client.agents.update(agent.id, parallel_tool_calls=True)
    call_ids = ["call_ls", "call_pwd", "call_echo"]
    mock_llm.script(Reply.tool_calls(*[Call("get_secret_code_tool", {"input_text": i}, i) for i in call_ids]))
    asked = send(http, agent.id, "three codes").json()
    assert asked["stop_reason"]["stop_reason"] == "requires_approval"
    run_id = asked["messages"][0]["run_id"]
    assert http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [run_id]}).json() == {
        run_id: "cancelled"
    }
    run = client.runs.retrieve(run_id)
    assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
    messages = http.get(f"/v1/runs/{run_id}/messages").json()
    assert [m["message_type"] for m in messages[-2:]] == ["approval_response_message", "tool_return_message"]
    response, returned = messages[-2:]
    assert [(a["tool_call_id"], a["approve"]) for a in response["approvals"]] == [(i, False) for i in call_ids]
    assert [r["tool_call_id"] for r in returned["tool_returns"]] == call_ids
    assert {(r["status"], r["tool_return"]) for r in returned["tool_returns"]} == {("error", DENIED)}
    # The agent takes a normal message again; the model reads one tool message per denied call.
    mock_llm.script(Reply.text("fine"))
    again = send(http, agent.id, "hello").json()
    assert again["stop_reason"]["stop_reason"] == "end_turn"
    sent = [m for m in mock_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == call_ids
