"""What a token stream shows of a Claude agent's signed thinking, as Letta 0.16.8's streams show it.

A memgpt_v2_agent streams every thinking fragment and then an empty one carrying the block's signature (Letta's V2
Anthropic interface yields one for the signature delta).
"""

from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_anthropic_api import chttp, make_agent, sse_data  # noqa: F401  (chttp: a fixture)
from tests.mock_llm import MockLLM, Reply


def stream(client: httpx.Client, agent_id: str, text: str) -> list[dict[str, Any]]:
    body = {"messages": [{"role": "user", "content": text}], "stream_tokens": True}
    response = client.post(f"/v1/agents/{agent_id}/messages/stream", json=body)
    assert response.status_code == 200
    return sse_data(response.text)


def test_v2_agent_streams_the_signature_as_an_empty_reasoning_fragment(
    claude: Letta,
    chttp: httpx.Client,  # noqa: F811
    mock_llm: MockLLM,
) -> None:
    agent = make_agent(claude, agent_type="memgpt_v2_agent")
    assert agent.llm_config.enable_reasoner
    mock_llm.script(Reply.tool_call("send_message", {"message": "Hi Bob!"}, reasoning="Greet him.", signature="sig-2"))
    reasoning = [c for c in stream(chttp, agent.id, "hi") if c["message_type"] == "reasoning_message"]
    assert [(c["reasoning"], c["signature"]) for c in reasoning] == [("Greet", None), (" him.", None), ("", "sig-2")]
    assert {c["source"] for c in reasoning} == {"reasoner_model"}
    assert len({(c["id"], c["otid"]) for c in reasoning}) == 1  # one message part, as the stored row's view
    listed = [m for m in claude.agents.messages.list(agent.id) if m.message_type == "reasoning_message"]
    last = listed[-1]
    assert (last.reasoning, last.signature, last.otid) == ("Greet him.", "sig-2", reasoning[0]["otid"])
