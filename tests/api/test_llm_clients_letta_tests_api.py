"""What the LLM clients send and how provider failures read, after Letta 0.16.8's tests of its clients
(tests/test_llm_clients.py, tests/adapters/test_letta_llm_stream_adapter_error_handling.py and
tests/test_sonnet_nonnative_reasoning_buffering.py): the request headers a provider gets, and the HTTP status, error
type and stop reason a user sees when the provider refuses or breaks off.
"""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_anthropic_api import make_agent
from tests.mock_llm import MockLLM, Reply

FINE_GRAINED = "fine-grained-tool-streaming-2025-05-14"


def sse_events(text: str) -> list[tuple[str | None, str]]:
    events, name = [], None
    for line in text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, line[6:]))
            name = None
    return events


class TestAnthropicStreamingHeaders:
    def test_a_token_stream_asks_for_fine_grained_tool_streaming(
        self, claude: Letta, claude_server: Any, mock_llm: MockLLM
    ) -> None:
        """Letta's streaming path sends the fine-grained tool streaming beta (tool arguments, where a non-native
        reasoner's thoughts and messages live, then stream as written); its blocking path does not."""
        agent = make_agent(claude)
        mock_llm.script(Reply.text("Hello Bob."))
        with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
            body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
            streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        assert streamed.status_code == 200
        chunks = [json.loads(d) for _, d in sse_events(streamed.text) if d.startswith("{")]
        assert "".join(c["content"] for c in chunks if c["message_type"] == "assistant_message") == "Hello Bob."
        [request] = mock_llm.requests
        assert request["_beta"].split(",") == [FINE_GRAINED, "interleaved-thinking-2025-05-14"]

        mock_llm.reset()
        mock_llm.script(Reply.text("Hello again."))
        claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi again"}])
        [blocking] = mock_llm.requests
        assert FINE_GRAINED not in blocking.get("_beta", "")
