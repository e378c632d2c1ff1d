"""The agentic-learning SDK (letta-ai/learning-sdk, PyPI ``agentic-learning`` 0.4.3) against memlet, call for call.

The SDK wraps OpenAI / Anthropic / Gemini / Claude Agent SDK calls: before a call it reads the agent's memory blocks
(``agents.list(name=, tags=["agentic-learning-sdk"], include=[...])``) and after it posts the exchange to Letta's
hidden ``POST /v1/agents/{agent_id}/messages/capture`` (plain httpx, not letta-client), which stores the messages
and fires the agent's sleeptime group. Its agents are ``letta_v1_agent``s with ``enable_sleeptime`` and a sleeptime
frequency of 2.
"""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta
from letta_client.types import AgentState

from tests.api.sleeptime_support import (
    SLEEPTIME_PROMPT_MARK,
    sleeptime_requests,
    sleeptime_runs,
    wait_all_ended,
)
from tests.mock_llm import MockLLM

TAG = "agentic-learning-sdk"
INCLUDE = ["agent.blocks", "agent.managed_group", "agent.tags"]


@pytest.fixture(autouse=True)
def sleeptime_replies_apart(server: object, mock_llm: MockLLM) -> None:
    mock_llm.script_when(SLEEPTIME_PROMPT_MARK)


def create_learning_agent(client: Letta, http: httpx.Client, name: str = "demo") -> AgentState:
    """`AgenticLearning().agents.create(agent=name)`: the agent, then its sleeptime group set to every 2nd turn."""
    agent = client.agents.create(
        name=name,
        agent_type="letta_v1_agent",
        memory_blocks=[{"label": "human", "value": "I don't yet know anything about them."}],
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        tags=[TAG],
        enable_sleeptime=True,
    )
    assert agent.multi_agent_group is not None
    config = {"manager_type": "sleeptime", "sleeptime_agent_frequency": 2}  # letta-client 1.x has no groups
    response = http.patch(f"/v1/groups/{agent.multi_agent_group.id}", json={"manager_config": config})
    assert response.status_code == 200, response.text
    return agent


def capture(http: httpx.Client, agent_id: str, user: str, reply: str) -> httpx.Response:
    """What `MessagesClient.capture` posts after an intercepted OpenAI chat completion."""
    payload = {
        "provider": "openai",
        "request_messages": [{"role": "user", "content": user}],
        "response_dict": {"role": "assistant", "content": reply},
        "model": "gpt-4o-mini",
    }
    return http.post(f"/v1/agents/{agent_id}/messages/capture", json=payload)


def history(client: Letta, agent_id: str) -> list[tuple[str, Any]]:
    return [
        (m.message_type, getattr(m, "content", None))
        for m in client.agents.messages.list(agent_id, order="asc").items
        if m.message_type != "system_message"
    ]


class TestCapture:
    def test_stores_the_exchange_in_the_agents_history(self, client: Letta, http: httpx.Client) -> None:
        agent = create_learning_agent(client, http)
        response = capture(http, agent.id, "My name is Sarah and I love cats", "Nice to meet you, Sarah")
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["success"], body["messages_created"]) == (True, 2)
        assert history(client, agent.id) == [
            ("user_message", "My name is Sarah and I love cats"),
            ("assistant_message", "Nice to meet you, Sarah"),
        ]
        # As in Letta, the captured messages are history only: the agent's context window does not hold them.
        state = client.agents.retrieve(agent.id)
        assert len(state.message_ids or []) == 1

    def test_only_user_messages_of_the_request_are_kept(self, client: Letta, http: httpx.Client) -> None:
        agent = create_learning_agent(client, http)
        payload = {
            "provider": "anthropic",
            "request_messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "earlier reply"},
                {"role": "user", "content": "second"},
            ],
            "response_dict": {"role": "assistant", "content": "answer"},
            "model": "claude-sonnet-4-20250514",
        }
        response = http.post(f"/v1/agents/{agent.id}/messages/capture", json=payload)
        assert response.status_code == 200, response.text
        assert response.json()["messages_created"] == 3
        assert history(client, agent.id) == [
            ("user_message", "first"),
            ("user_message", "second"),
            ("assistant_message", "answer"),
        ]

    def test_fires_the_sleeptime_agent_with_the_transcript(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = create_learning_agent(client, http)
        helper_id = agent.multi_agent_group.agent_ids[0]  # type: ignore[union-attr]
        first = capture(http, agent.id, "My name is Sarah", "Hi Sarah").json()
        (run,) = wait_all_ended(client, helper_id, 1)
        assert first["run_ids"] == [run.id]
        assert run.status == "completed"
        (sent,) = sleeptime_requests(mock_llm)
        transcript = json.dumps(sent["messages"])
        assert "user: My name is Sarah" in transcript and "assistant: Hi Sarah" in transcript
        # Frequency 2: the second capture is counted but fires nothing, the third fires again.
        assert capture(http, agent.id, "I fly planes", "Cool").json()["run_ids"] == []
        third = capture(http, agent.id, "I live in Oslo", "Nice").json()
        assert len(third["run_ids"]) == 1
        assert [r.id for r in wait_all_ended(client, helper_id, 2)][1] == third["run_ids"][0]
        assert len(sleeptime_runs(client, helper_id)) == 2

    def test_without_sleeptime_no_run(self, client: Letta, http: httpx.Client) -> None:
        agent = client.agents.create(
            name="plain", model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small"
        )
        body = capture(http, agent.id, "hello", "hi").json()
        assert (body["success"], body["messages_created"], body["run_ids"]) == (True, 2, [])

    def test_sleeptime_switched_off_fires_nothing(self, client: Letta, http: httpx.Client) -> None:
        """memlet's side (README): Letta's capture still fired the group kept after enable_sleeptime went off."""
        agent = create_learning_agent(client, http)
        helper_id = agent.multi_agent_group.agent_ids[0]  # type: ignore[union-attr]
        client.agents.update(agent.id, enable_sleeptime=False)
        body = capture(http, agent.id, "hello", "hi").json()
        assert (body["messages_created"], body["run_ids"]) == (2, [])
        assert sleeptime_runs(client, helper_id) == []
        client.agents.update(agent.id, enable_sleeptime=True)
        assert len(capture(http, agent.id, "again", "yes").json()["run_ids"]) == 1

    def test_unknown_agent_is_a_404(self, http: httpx.Client) -> None:
        response = capture(http, "agent-00000000-0000-4000-8000-000000000000", "hello", "hi")
        assert response.status_code == 404, response.text

    @pytest.mark.parametrize(
        "change",
        [
            {"request_messages": [{"content": "no role"}]},
            {"request_messages": [{"role": "user", "content": [{"type": "text", "text": "parts"}]}]},
            {"response_dict": {"role": "assistant"}},
            {"model": None},
        ],
    )
    def test_malformed_capture_is_a_422_and_stores_nothing(
        self, client: Letta, http: httpx.Client, change: dict[str, Any]
    ) -> None:
        agent = create_learning_agent(client, http)
        payload = {
            "provider": "openai",
            "request_messages": [{"role": "user", "content": "hi"}],
            "response_dict": {"role": "assistant", "content": "hello"},
            "model": "gpt-4o-mini",
            **change,
        }
        response = http.post(f"/v1/agents/{agent.id}/messages/capture", json=payload)
        assert response.status_code == 422, response.text
        assert "detail" in response.json()
        assert history(client, agent.id) == []

    def test_is_not_in_the_openapi_document(self, http: httpx.Client) -> None:
        paths = http.get("/openapi.json").json()["paths"]
        assert "/v1/agents/{agent_id}/messages/capture" not in paths
