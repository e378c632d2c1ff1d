"""The loop under pressure, as clients see it: a tiny context window over 200 messages, and 20 concurrent sends."""

from concurrent.futures import ThreadPoolExecutor

import httpx
from letta_client import Letta

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM
from tests.token_budget import completion_allowance, prompt_tokens

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
    replies = [r for r in mock_llm.requests if r.get("tools")]
    summaries = [r for r in mock_llm.requests if not r.get("tools")]
    assert len(replies) == 200  # one LLM call per turn, none lost or repeated
    assert summaries  # the window overflowed, so the history was summarized
    assert agent.llm_config.max_tokens == 16384  # the model's own limit, far more than this window holds
    for request in mock_llm.requests:  # replies and summaries alike, counted independently of memlet
        allowance = completion_allowance(request)
        assert allowance is not None and allowance >= WINDOW // 8  # real room for a reply, not a token or two
        assert prompt_tokens(request) + allowance <= WINDOW
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
