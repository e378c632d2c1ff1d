"""Helpers for the sleeptime API tests: a main agent with enable_sleeptime, its replies, waiting for runs."""

import time
from typing import Any

import httpx
from letta_client import Letta
from letta_client.types import AgentState

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
# Words of memlet's sleeptime system prompt: the mock answers the sleeptime agent's requests from their own queue.
SLEEPTIME_PROMPT_MARK = "background memory manager"
RUN_TYPE = "sleeptime_agent_send_message_async"


def make_main(client: Letta, name: str = "main", **overrides: Any) -> AgentState:
    return client.agents.create(
        name=name,
        model=MODEL,
        embedding=EMBEDDING,
        enable_sleeptime=True,
        memory_blocks=[
            {"label": "human", "value": "The user's name is not known yet."},
            {"label": "persona", "value": "A helpful assistant."},
        ],
        **overrides,
    )


def sleeptime_of(client: Letta, main: AgentState) -> AgentState:
    (agent,) = [a for a in client.agents.list(name=f"{main.name}-sleeptime", include=["agent.blocks", "agent.tools"])]
    return agent


def say(client: Letta, mock: MockLLM, agent_id: str, text: str) -> Any:
    """One foreground turn: the main agent answers with a send_message call."""
    mock.script(Reply.tool_call("send_message", {"message": f"re: {text}"}))
    return client.agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])


def sleeptime_runs(client: Letta, agent_id: str) -> list[Any]:
    return sorted(client.runs.list(agent_ids=[agent_id], limit=100), key=lambda r: r.created_at)


def wait_for(condition: Any, what: str, timeout_s: float = 20) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def wait_all_ended(client: Letta, agent_id: str, count: int) -> list[Any]:
    def ended() -> list[Any] | None:
        runs = sleeptime_runs(client, agent_id)
        done = len(runs) == count and all(r.status in ("completed", "failed", "cancelled") for r in runs)
        return runs if done else None

    return list(wait_for(ended, f"{count} sleeptime runs to end"))


def sleeptime_requests(mock: MockLLM) -> list[dict[str, Any]]:
    return [r for r in mock.requests if SLEEPTIME_PROMPT_MARK in str(r["messages"][0]["content"])]


def groups(http: httpx.Client) -> list[dict[str, Any]]:
    response = http.get("/v1/groups/")
    assert response.status_code == 200, response.text
    return list(response.json())
