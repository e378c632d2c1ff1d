"""Findings of the attack on issue #12's routes (groups, chat completions, multi-agent tools), each a regression test
against the live server and the mock LLM."""

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_multi_agent_tools_api import WAIT, make_agent, tool_returns
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
