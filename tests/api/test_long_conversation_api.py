"""Issue #11's acceptance run: 300 turns through a 4,000-token window. The mock counts every request with
cl100k_base, reports those counts as usage, and answers any request whose prompt plus completion limit passes the
window with OpenAI's context-length error, so an oversized request would fail the turn."""

import json
import time

import httpx
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply
from tests.token_budget import completion_allowance, prompt_tokens

WINDOW = 4000
TURNS = 300


def test_300_turns_through_a_4000_token_window(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    mock_llm.enforce_window(WINDOW)
    try:
        agent = client.agents.create(model="openai/gpt-4o-mini", context_window_limit=WINDOW)
        started = time.monotonic()
        for i in range(TURNS - 1):
            mock_llm.script(Reply.text(f"answer {i}: " + "the river bends past the mill " * 4))
            body = {"input": f"turn {i}: " + "tell me about the valley and its river " * 4}
            response = http.post(f"/v1/agents/{agent.id}/messages", json=body)
            assert response.status_code == 200, (i, response.text)
        body = {"input": "last turn: " + "and the mountains " * 300, "include_compaction_messages": True}
        with http.stream("POST", f"/v1/agents/{agent.id}/messages/stream", json=body) as response:
            assert response.status_code == 200
            events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
        elapsed = time.monotonic() - started
    finally:
        mock_llm.enforce_window(None)
    requests = mock_llm.requests
    assert len([r for r in requests if r.get("tools")]) == TURNS  # one call per turn, no retries needed
    for request in requests:  # replies and summaries, counted independently of memlet
        assert prompt_tokens(request) + (completion_allowance(request) or 0) <= WINDOW
    summaries = [r for r in requests if not r.get("tools")]
    assert len(summaries) >= 10  # the window was compacted again and again
    kinds = [e.get("message_type") for e in events]
    assert "summary_message" in kinds and kinds[-2:] == ["stop_reason", "usage_statistics"]
    streamed = next(e for e in events if e.get("message_type") == "summary_message")
    # The summary opens the agent's window and stays in its history (shown there as a user message, as Letta does).
    state = client.agents.retrieve(agent.id)
    opening = client.messages.retrieve((state.message_ids or [])[1])[0]
    assert opening.id == streamed["id"] and "hidden from view" in str(opening.content)
    history = client.agents.messages.list(agent.id, limit=1000).items
    assert sum("have been hidden from view" in str(getattr(m, "content", "")) for m in history) == len(summaries)
    assert elapsed < 120
