"""Findings of the attack on issue #12's routes (groups, chat completions, multi-agent tools), each a regression test
against the live server and the mock LLM."""

import ast
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.test_multi_agent_tools_api import MODEL, TAGS, WAIT, make_agent, tool_returns
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def delete_while_answering(http: httpx.Client, mock_llm: MockLLM, agent_id: str, call: Callable[[], Any]) -> Any:
    """Run `call` (a turn on the agent whose LLM reply takes 1.5 s) and delete the agent while it waits."""
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("result", call()))
    worker.start()
    deadline = time.monotonic() + 10
    while len(mock_llm.requests) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert http.delete(f"/v1/agents/{agent_id}").status_code == 200
    worker.join(timeout=30)
    return outcome["result"]


class TestAgentDeletedDuringItsTurn:
    """The turn's commit found the agent gone: its messages hit the foreign key (500, SQL in the stream)."""

    def test_blocking_send_is_a_404(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(1.5, Reply.text("too late")))

        def send() -> httpx.Response:
            return http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})

        response = delete_while_answering(http, mock_llm, agent.id, send)
        assert response.status_code == 404, response.text
        assert response.json() == {"detail": f"Agent with ID {agent.id} not found"}

    def test_chat_completion_is_a_404(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(1.5, Reply.text("too late")))
        body = {"model": agent.id, "messages": [{"role": "user", "content": "hi"}]}
        response = delete_while_answering(
            http, mock_llm, agent.id, lambda: http.post("/v1/chat/completions", json=body)
        )
        assert response.status_code == 404, response.text

    def test_streamed_send_ends_with_a_not_found_error(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(1.5, Reply.text("too late")))
        body = {"messages": [{"role": "user", "content": "hi"}]}
        response = delete_while_answering(
            http, mock_llm, agent.id, lambda: http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        )
        assert f"Agent with ID {agent.id} not found" in response.text
        assert "INSERT INTO" not in response.text

    def test_multi_agent_sender_gets_a_clear_error_and_stays_usable(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        sender, target = make_agent(client, multi=True), make_agent(client)
        mock_llm.script(
            Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": target.id}),
            Reply.delay(1.5, Reply.text("too late")),
            Reply.text("It is gone."),
        )

        def ask() -> Any:
            return client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "Go."}])

        outcome: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: outcome.setdefault("result", ask()))
        worker.start()
        deadline = time.monotonic() + 10
        while len(mock_llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert http.delete(f"/v1/agents/{target.id}").status_code == 200
        worker.join(timeout=30)
        (ret,) = tool_returns(outcome["result"])
        assert ret.status == "error"
        assert ret.tool_return == (
            f"Could not deliver the message to agent {target.id}: Agent with ID {target.id} not found"
        )
        mock_llm.script(Reply.text("Still here."))
        after = client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "again"}])
        assert after.stop_reason.stop_reason == "end_turn"


def persona_agent(client: Letta, marker: str, *, tags: list[str], multi: bool = False) -> Any:
    """An agent whose system prompt holds `marker`, so the mock can script its replies alone."""
    return client.agents.create(
        agent_type="letta_v1_agent",
        model=MODEL,
        embedding="openai/text-embedding-3-small",
        memory_blocks=[{"label": "persona", "value": f"I am {marker}."}],
        tags=tags,
        extra_body={"include_multi_agent_tools": multi},
    )


class TestTagBroadcast:
    def test_busy_recipients_are_waited_for_at_the_same_time(
        self, client: Letta, mock_llm: MockLLM, settings: Settings, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Asked one after the other, each busy recipient cost a whole lock wait (100 of them: 100 waits)."""
        monkeypatch.setattr(settings, "agent_message_wait_s", 1.0)
        team = [persona_agent(client, f"MEMBER{i}X", tags=["team"]) for i in range(4)]
        sender = persona_agent(client, "SENDERX", tags=[], multi=True)
        slow_step = Reply.delay(1.0, Reply.tool_call("conversation_search", {"query": "tea"}))
        for i in range(4):
            mock_llm.script_when(f"MEMBER{i}X", *[slow_step] * 5)
        busy = [
            threading.Thread(
                target=client.agents.messages.create,
                args=(a.id,),
                kwargs={"messages": [{"role": "user", "content": "work"}]},
            )
            for a in team
        ]
        for thread in busy:
            thread.start()
        deadline = time.monotonic() + 10
        while len(mock_llm.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        call = Reply.tool_call(TAGS, {"message": "all hands", "match_all": ["team"], "match_some": []})
        mock_llm.script_when("SENDERX", call, Reply.text("Sent."))
        started = time.monotonic()
        response = client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "Go."}])
        took = time.monotonic() - started
        for thread in busy:
            thread.join(timeout=30)
        (ret,) = tool_returns(response)
        entries = ast.literal_eval(ret.tool_return)
        assert [e["agent_id"] for e in entries] == [a.id for a in reversed(team)]  # newest first, as found
        assert all("currently being processed" in e["response"][0] for e in entries), entries
        assert took < 3.0, f"four busy recipients took {took:.1f} s (one lock wait is 1 s)"


class TestModelOutputPostgresCannotStore:
    """A model's reply holding a NUL or a lone surrogate failed the turn's commit: a 500 for chat completions."""

    @pytest.mark.parametrize("text", ["before\x00after", "before\ud800after"])
    def test_chat_completion_stores_the_reply_without_it(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM, text: str
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text(text))
        body = {"model": agent.id, "messages": [{"role": "user", "content": "hi"}], "stream": False}
        response = http.post("/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        stored = http.get(f"/v1/agents/{agent.id}/messages", params={"limit": 10}).json()
        assert [m["content"] for m in stored if m["message_type"] == "assistant_message"] == [
            text.replace("\x00", "").replace("\ud800", "\ufffd")
        ]


class TestMultiAgentArguments:
    """Arguments a model got wrong reached the database: the tool return showed SQL, or the target's turn failed."""

    @pytest.mark.parametrize("target", [5, ["agent-00000000-0000-4000-8000-000000000001"], "agent-\x00", None])
    def test_a_target_that_is_not_an_agent_id_is_refused(
        self, client: Letta, mock_llm: MockLLM, target: object
    ) -> None:
        sender = make_agent(client, multi=True)
        mock_llm.script(Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": target}), Reply.text("ok"))
        response = client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "Go."}])
        (ret,) = tool_returns(response)
        assert ret.status == "error"
        assert ret.tool_return.endswith(": not an agent id"), ret.tool_return

    @pytest.mark.parametrize(("tool", "args"), [(WAIT, {"message": None}), (TAGS, {"message": "hi", "match_all": 5})])
    def test_arguments_of_the_wrong_type_are_named(
        self, client: Letta, mock_llm: MockLLM, tool: str, args: dict[str, Any]
    ) -> None:
        sender, target = make_agent(client, multi=True), make_agent(client)
        full = {"other_agent_id": target.id} if tool == WAIT else {"match_some": []}
        mock_llm.script(Reply.tool_call(tool, {**full, **args}), Reply.text("ok"))
        (ret,) = tool_returns(client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "Go."}]))
        assert ret.status == "error"
        assert "must be a" in ret.tool_return and "SQL" not in ret.tool_return, ret.tool_return

    def test_a_message_with_a_lone_surrogate_is_delivered(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        sender, target = make_agent(client, multi=True), make_agent(client)
        mock_llm.script(
            Reply.tool_call(WAIT, {"message": "odd \ud800 text", "other_agent_id": target.id}),
            Reply.text("Got it."),
            Reply.text("ok"),
        )
        (ret,) = tool_returns(client.agents.messages.create(sender.id, messages=[{"role": "user", "content": "Go."}]))
        assert ret.status == "success" and "Got it." in ret.tool_return, ret.tool_return
        history = http.get(f"/v1/agents/{target.id}/messages", params={"limit": 10}).json()
        assert any("odd \ufffd text" in str(m.get("content")) for m in history)


def test_a_tool_name_with_a_nul_is_an_unknown_tool_not_a_500(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.tool_call("conversation\x00search", {"query": "tea"}), Reply.text("Done."))
    body = {"model": agent.id, "messages": [{"role": "user", "content": "hi"}]}
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "Done."


def test_crossing_chains_end_with_an_error_each_after_one_bounded_wait(
    client: Letta, mock_llm: MockLLM, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A asks B while B asks A, both started at once: each holds its own lock and waits for the other's, which is
    never let go until the wait ends; both turns end within a bounded time, neither deadlocked."""
    monkeypatch.setattr(settings, "agent_message_wait_s", 0.5)
    first = persona_agent(client, "FIRSTX", tags=[], multi=True)
    second = persona_agent(client, "SECONDX", tags=[], multi=True)
    mock_llm.script_when(
        "FIRSTX",
        Reply.delay(0.5, Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": second.id})),
        Reply.text("first done"),
    )
    mock_llm.script_when(
        "SECONDX",
        Reply.delay(0.5, Reply.tool_call(WAIT, {"message": "hi", "other_agent_id": first.id})),
        Reply.text("second done"),
    )
    outcome: dict[str, Any] = {}

    def ask(agent: Any) -> None:
        outcome[agent.id] = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "Go."}])

    started = time.monotonic()
    workers = [threading.Thread(target=ask, args=(a,)) for a in (first, second)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=20)
    assert time.monotonic() - started < 8
    for agent, other in ((first, second), (second, first)):
        (ret,) = tool_returns(outcome[agent.id])
        # Each wait ends in a busy error; the later one may instead get the lock the earlier turn just let go.
        assert other.id in ret.tool_return, ret.tool_return
        assert outcome[agent.id].stop_reason.stop_reason == "end_turn"
