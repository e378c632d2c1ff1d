"""The multi-agent tools (issue #12 item 3) through letta-client against the live server and the mock LLM.

They run in-process: the target's turn is a normal run on the target, with Letta's prefixes and return strings,
a lock wait bounded by `agent_message_wait_s`, cycle refusal and a depth limit of 3.
"""

import ast
import json
import threading
import time
from typing import Any

import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
WAIT = "send_message_to_agent_and_wait_for_reply"
TAGS = "send_message_to_agents_matching_tags"
ASYNC = "send_message_to_agent_async"


def reply_prefix(sender_id: str) -> str:
    return f"[Incoming message from agent with ID '{sender_id}' - your response will be delivered to the sender] "


def notify_prefix(sender_id: str) -> str:
    return (
        f"[Incoming message from agent with ID '{sender_id}' - this is a one-way notification; if you need to "
        "respond, use an agent-to-agent messaging tool if available] "
    )


def make_agent(client: Letta, *, multi: bool = False, tags: list[str] | None = None, **kwargs: Any) -> Any:
    # letta-client 1.x has no include_multi_agent_tools argument; the server still reads it from the body.
    return client.agents.create(
        agent_type="letta_v1_agent",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "persona", "value": "I help."}],
        tags=tags or [],
        extra_body={"include_multi_agent_tools": multi},
        **kwargs,
    )


def ask(client: Letta, agent_id: str, text: str = "Go.") -> Any:
    started = time.perf_counter()
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])
    print(f"send to {agent_id} with nested agent turns took {time.perf_counter() - started:.3f} s")
    return response


def tool_returns(response: Any) -> list[Any]:
    return [m for m in response.messages if m.message_type == "tool_return_message"]


def system_texts(client: Letta, agent_id: str) -> list[str]:
    history = client.agents.messages.list(agent_id, limit=100, order="asc").items
    return [str(m.content) for m in history if m.message_type == "system_message"]


def runs_of(client: Letta, agent_id: str) -> list[Any]:
    return list(client.runs.list(agent_id=agent_id).items)


def sent_texts(request: dict[str, Any]) -> list[str]:
    """Every text a model request carried (message contents and tool results)."""
    texts = []
    for message in request["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            texts += [part.get("text", "") for part in content if isinstance(part, dict)]
        elif content:
            texts.append(str(content))
    return texts


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


class TestWaitForReply:
    def test_returns_the_targets_reply_as_letta_repr(self, client: Letta, mock_llm: MockLLM) -> None:
        supervisor, worker = make_agent(client, multi=True), make_agent(client)
        before = system_texts(client, worker.id)
        ask(client, supervisor.id, "warm up")  # the session's first turn pays for connections and caches
        mock_llm.reset()
        mock_llm.script(
            Reply.tool_call(WAIT, {"message": "What is Two plus two?", "other_agent_id": worker.id}),
            Reply.text("Four."),
            Reply.text("The worker says four."),
        )
        started = time.perf_counter()
        response = ask(client, supervisor.id)
        assert time.perf_counter() - started < 1.0

        (ret,) = tool_returns(response)
        assert ret.status == "success"
        assert ast.literal_eval(ret.tool_return) == {"agent_id": worker.id, "response": ["Four."]}
        expected = f"{reply_prefix(supervisor.id)}What is Two plus two?\nwhat is two plus two?"
        assert system_texts(client, worker.id) == [*before, expected]
        # The worker's model read the message; the supervisor's next request read the reply.
        worker_request, final_request = mock_llm.requests[1], mock_llm.requests[2]
        assert worker_request["messages"][-1] == {"role": "system", "content": expected}
        assert any("Four." in t for t in sent_texts(final_request))
        (run,) = runs_of(client, worker.id)
        assert run.status == "completed"
        assert len(runs_of(client, supervisor.id)) == 2

    def test_lowercase_message_has_no_copy_and_silence_is_no_response(self, client: Letta, mock_llm: MockLLM) -> None:
        # A worker whose turn ends with a (terminal) search says nothing.
        supervisor = make_agent(client, multi=True)
        worker = make_agent(client, tool_rules=[{"type": "exit_loop", "tool_name": "conversation_search"}])
        mock_llm.script(
            Reply.tool_call(WAIT, {"message": "ping", "other_agent_id": worker.id}),
            Reply.tool_call("conversation_search", {"query": "ping"}),
            Reply.text("done"),
        )
        response = ask(client, supervisor.id)
        (ret,) = tool_returns(response)
        assert ast.literal_eval(ret.tool_return) == {"agent_id": worker.id, "response": ["<no response>"]}
        assert system_texts(client, worker.id)[-1] == f"{reply_prefix(supervisor.id)}ping"

    def test_unknown_target_is_an_error_return(self, client: Letta, mock_llm: MockLLM) -> None:
        supervisor = make_agent(client, multi=True)
        missing = "agent-00000000-0000-4000-8000-000000000099"
        mock_llm.script(Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": missing}), Reply.text("ok"))
        (ret,) = tool_returns(ask(client, supervisor.id))
        assert ret.status == "error"
        assert missing in ret.tool_return and "not found" in ret.tool_return


def test_matching_tags_reaches_only_agents_with_all_and_some(client: Letta, mock_llm: MockLLM) -> None:
    supervisor = make_agent(client, multi=True, tags=["worker"])
    team_a = make_agent(client, tags=["worker", "team-a"])
    plain = make_agent(client, tags=["worker"])
    make_agent(client, tags=["team-a"])  # lacks match_all
    mock_llm.script(
        Reply.tool_call(TAGS, {"message": "report in", "match_all": ["worker"], "match_some": ["team-a"]}),
        Reply.text("team-a here"),
        Reply.text("done"),
    )
    (ret,) = tool_returns(ask(client, supervisor.id))
    assert ast.literal_eval(ret.tool_return) == [{"agent_id": team_a.id, "response": ["team-a here"]}]
    expected = f"{reply_prefix(supervisor.id)}report in"
    assert system_texts(client, team_a.id)[-1] == expected
    assert expected in sent_texts(mock_llm.requests[1])
    assert runs_of(client, plain.id) == []
    assert len(mock_llm.requests) == 3


def test_matching_tags_reaches_the_newest_50_as_letta_reads_one_page(client: Letta, mock_llm: MockLLM) -> None:
    supervisor = make_agent(client, multi=True)
    team = [make_agent(client, tags=["team"]).id for _ in range(51)]
    mock_llm.script(
        Reply.tool_call(TAGS, {"message": "roll call", "match_all": ["team"], "match_some": []}),
        *[Reply.text("here") for _ in range(50)],
        Reply.text("done"),
    )
    (ret,) = tool_returns(ask(client, supervisor.id))
    assert [r["agent_id"] for r in ast.literal_eval(ret.tool_return)] == team[:0:-1]
    assert runs_of(client, team[0]) == []


def test_matching_tags_reports_a_failed_recipient_as_an_error_entry(client: Letta, mock_llm: MockLLM) -> None:
    asker = make_agent(client, multi=True, tags=["worker", "team-a"])
    broadcaster = make_agent(client, multi=True)
    other = make_agent(client, tags=["worker", "team-a"])
    mock_llm.script(
        Reply.tool_call(WAIT, {"message": "collect", "other_agent_id": broadcaster.id}),
        Reply.tool_call(TAGS, {"message": "report", "match_all": ["worker"], "match_some": ["team-a"]}),
        Reply.text("other here"),  # the newest recipient first; the asker itself is waiting, so it is refused
        Reply.text("collected"),
        Reply.text("done"),
    )
    ask(client, asker.id)
    history = client.agents.messages.list(broadcaster.id, limit=50).items
    (ret,) = [m for m in history if m.message_type == "tool_return_message"]
    first, second = ast.literal_eval(ret.tool_return)
    assert first == {"agent_id": other.id, "response": ["other here"]}
    assert second["agent_id"] == asker.id
    assert second["response"][0].startswith(f"<error: Agent {asker.id} is waiting for this agent's reply")
    assert len(mock_llm.requests) == 5


def test_async_sends_a_notification(client: Letta, mock_llm: MockLLM) -> None:
    supervisor, worker = make_agent(client, multi=True), make_agent(client)
    mock_llm.script(
        Reply.tool_call(ASYNC, {"message": "Deploy done", "other_agent_id": worker.id}),
        Reply.text("noted"),
        Reply.text("ok"),
    )
    (ret,) = tool_returns(ask(client, supervisor.id))
    assert ret.tool_return == "Successfully sent message"
    assert system_texts(client, worker.id)[-1] == f"{notify_prefix(supervisor.id)}Deploy done"
    assert [r.status for r in runs_of(client, worker.id)] == ["completed"]


def test_cycle_is_refused_at_once(client: Letta, mock_llm: MockLLM, server: LiveServer) -> None:
    a, b = make_agent(client, multi=True), make_agent(client, multi=True)
    mock_llm.script(
        Reply.tool_call(WAIT, {"message": "ping", "other_agent_id": b.id}),
        Reply.tool_call(WAIT, {"message": "pong", "other_agent_id": a.id}),
        Reply.text("B could not ask back"),
        Reply.text("done"),
    )
    a_before = system_texts(client, a.id)
    timed = Letta(base_url=server.base_url, max_retries=0, timeout=10)  # a hang fails the test
    started = time.perf_counter()
    response = ask(timed, a.id)
    assert time.perf_counter() - started < 3.0

    (ret,) = tool_returns(response)
    assert ast.literal_eval(ret.tool_return) == {"agent_id": b.id, "response": ["B could not ask back"]}
    refusal = json.loads(mock_llm.requests[2]["messages"][-1]["content"])
    assert refusal["status"] == "Failed"
    assert f"Agent {a.id} is waiting for this agent's reply ({a.id} -> {b.id} -> {a.id})" in refusal["message"]
    assert system_texts(client, a.id) == a_before  # A never got B's message
    assert len(runs_of(client, a.id)) == 1


def test_depth_is_limited_to_three(client: Letta, mock_llm: MockLLM) -> None:
    agents = [make_agent(client, multi=True) for _ in range(5)]
    calls = [Reply.tool_call(WAIT, {"message": "pass", "other_agent_id": nxt.id}) for nxt in agents[1:]]
    mock_llm.script(*calls, Reply.text("d"), Reply.text("c"), Reply.text("b"), Reply.text("a"))
    ask(client, agents[0].id)

    refusal = json.loads(mock_llm.requests[4]["messages"][-1]["content"])
    assert refusal["status"] == "Failed"
    assert "may only be nested 3 deep" in refusal["message"]
    assert runs_of(client, agents[4].id) == []
    c_returns = [m for m in client.agents.messages.list(agents[2].id).items if m.message_type == "tool_return_message"]
    assert ast.literal_eval(c_returns[0].tool_return) == {"agent_id": agents[3].id, "response": ["d"]}


def test_busy_target_waits_a_bounded_time_then_errors(
    client: Letta, mock_llm: MockLLM, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "agent_message_wait_s", 0.3)
    supervisor, worker = make_agent(client, multi=True), make_agent(client)
    mock_llm.script(Reply.delay(2.0, Reply.text("slow")))
    busy = threading.Thread(target=ask, args=(client, worker.id))
    busy.start()
    deadline = time.monotonic() + 5
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    mock_llm.script(Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": worker.id}), Reply.text("later"))
    started = time.perf_counter()
    (ret,) = tool_returns(ask(client, supervisor.id))
    assert time.perf_counter() - started < 1.5
    busy.join(timeout=10)
    assert ret.status == "error"
    assert "Another request" in ret.tool_return and "currently being processed" in ret.tool_return
    assert system_texts(client, worker.id)[-1] != f"{reply_prefix(supervisor.id)}hi"


def test_tool_run_route_asks_the_target_outside_a_turn(client: Letta, mock_llm: MockLLM) -> None:
    supervisor, worker = make_agent(client, multi=True), make_agent(client)
    mock_llm.script(Reply.text("Here."))
    result = client.agents.tools.run(
        agent_id=supervisor.id, tool_name=WAIT, args={"message": "there?", "other_agent_id": worker.id}
    )
    assert result.status == "success"
    assert ast.literal_eval(str(result.func_return)) == {"agent_id": worker.id, "response": ["Here."]}
    assert [r.status for r in runs_of(client, worker.id)] == ["completed"]
