"""What a token stream shows of a Claude agent's signed thinking, as Letta 0.16.8's streams show it.

A memgpt_v2_agent streams every thinking fragment and then an empty one carrying the block's signature (Letta's V2
Anthropic interface yields one for the signature delta). A letta_v1_agent streams neither the signature nor a
whitespace-only fragment (Letta's letta_v1 interface skips them); the stored thinking keeps its text exactly as
the model wrote it, since its signature covers that text and it is sent back with it.
"""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_anthropic_api import chttp, make_agent, sse_data  # noqa: F401  (chttp: a fixture)
from tests.mock_llm import MockLLM, Reply


def _event(name: str, payload: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n"


def _delta(index: int, delta: dict[str, Any]) -> str:
    return _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def claude_stream(thinking_pieces: list[str], signature: str, text: str) -> Reply:
    """An Anthropic message stream, piece by piece as given: a thinking block, then a text block."""
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {
        "id": "msg_raw",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    start = {"type": "thinking", "thinking": "", "signature": ""}
    events = [
        _event("message_start", {"type": "message_start", "message": message}),
        _event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        *[_delta(0, {"type": "thinking_delta", "thinking": p}) for p in thinking_pieces],
        _delta(0, {"type": "signature_delta", "signature": signature}),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        ),
        _delta(1, {"type": "text_delta", "text": text}),
        _event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return Reply.raw(*events)


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


def test_letta_v1_agent_streams_no_signature_and_no_whitespace_only_fragment(
    claude: Letta,
    chttp: httpx.Client,  # noqa: F811
    mock_llm: MockLLM,
) -> None:
    agent = make_agent(claude)
    assert agent.llm_config.enable_reasoner
    mock_llm.script(claude_stream(["Plan.", "\n\n", "Reply now.", "\n"], "sig-1", "Hello."))
    chunks = stream(chttp, agent.id, "hi")
    reasoning = [c for c in chunks if c["message_type"] == "reasoning_message"]
    assert [(c["reasoning"], c["signature"]) for c in reasoning] == [("Plan.", None), ("Reply now.", None)]
    assert [c["content"] for c in chunks if c["message_type"] == "assistant_message"] == ["Hello."]
    # The stored thinking is the text as signed, whitespace and all, and goes back so with its signature.
    listed = [m for m in claude.agents.messages.list(agent.id) if m.message_type == "reasoning_message"]
    assert [(m.reasoning, m.signature) for m in listed] == [("Plan.\n\nReply now.\n", "sig-1")]
    mock_llm.script(Reply.text("Again."))
    stream(chttp, agent.id, "again")
    sent_back = {"type": "thinking", "thinking": "Plan.\n\nReply now.\n", "signature": "sig-1"}
    assert sent_back in mock_llm.requests[-1]["messages"][-2]["content"]
