"""The loop under pressure, as clients see it: a tiny context window over 200 messages, and 20 concurrent sends."""

from concurrent.futures import ThreadPoolExecutor

import httpx
from letta_client import Letta

from memlet.loop.tokens import count_message_tokens, count_tools_tokens
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM

WINDOW = 3000


def send(http: httpx.Client, agent_id: str, text: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})


def test_tiny_window_over_200_messages(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(
        model="openai/gpt-4o-mini", context_window_limit=WINDOW, memory_blocks=[{"label": "human", "value": "Ann"}]
    )
    for i in range(200):
        response = send(http, agent.id, f"message number {i}: " + "tell me more about rivers and valleys " * 3)
        assert response.status_code == 200, response.text
    assert len(mock_llm.requests) >= 200
    for request in mock_llm.requests:  # replies and summaries alike
        used = count_message_tokens(request["messages"]) + count_tools_tokens(request.get("tools") or [])
        assert used <= WINDOW
    history = client.agents.messages.list(agent.id, limit=5).items
    assert history[-1].message_type == "assistant_message"
    state = client.agents.retrieve(agent.id)
    assert len(state.message_ids or []) < 400  # compacted: most of the 400 rows left the context


def test_twenty_concurrent_sends_to_one_agent(client: Letta, server: LiveServer, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(model="openai/gpt-4o-mini")

    def one(i: int) -> int:
        with httpx.Client(base_url=server.base_url, timeout=120) as own:
            return send(own, agent.id, f"question {i}").status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(one, range(20)))
    assert codes == [200] * 20
    rows = [
        m for m in client.agents.messages.list(agent.id, limit=100, order="asc") if m.message_type != "system_message"
    ]
    assert len(rows) == 40
    for user, reply in zip(rows[::2], rows[1::2], strict=True):
        assert (user.message_type, reply.message_type) == ("user_message", "assistant_message")
        assert user.run_id == reply.run_id  # each reply right after its own user message
