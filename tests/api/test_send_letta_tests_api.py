"""What Letta 0.16.8's own send-message integration tests (integration_test_send_message*.py) rely on, through
letta-client against the live server: a memgpt_v2 agent's token stream with `use_assistant_message` off shows
`send_message` as the tool call it is (its fragments, then its return), never as assistant text; and a V2 turn's
usage has no `context_tokens` (Letta's V2 loop never sets it; its V3 loop does).
"""

import json
from itertools import groupby
from typing import Any

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
OTID = "6f1c1d43-0d8e-4a44-8c3e-2f5b9d7e1a20"
REPLY = {"thinking": "The user wants the phrase.", "message": "Teamwork makes the dream work"}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def v2_agent(client: Letta) -> Any:
    send_message = client.tools.list(name="send_message").items[0]
    return client.agents.create(
        agent_type="memgpt_v2_agent",
        include_base_tools=False,
        tool_ids=[send_message.id],
        model=MODEL,
        embedding=EMBEDDING,
    )


@pytest.mark.parametrize("background", [False, True])
def test_v2_token_stream_without_assistant_message_shows_the_send_message_call(
    client: Letta, mock_llm: MockLLM, background: bool
) -> None:
    agent = v2_agent(client)
    mock_llm.script(Reply.tool_call("send_message", REPLY))
    stream = client.agents.messages.stream(
        agent.id,
        messages=[{"role": "user", "content": "Say the phrase.", "otid": OTID}],
        stream_tokens=True,
        use_assistant_message=False,
        background=background,
    )
    chunks = [c for c in stream if c.message_type != "ping"]
    kinds = [kind for kind, _ in groupby(c.message_type for c in chunks)]
    assert kinds == ["reasoning_message", "tool_call_message", "tool_return_message", "stop_reason", "usage_statistics"]
    calls = [c for c in chunks if c.message_type == "tool_call_message"]
    assert calls[0].tool_call.name == "send_message"  # type: ignore[union-attr]
    arguments = json.loads("".join(c.tool_call.arguments or "" for c in calls))  # type: ignore[union-attr]
    assert arguments == {"message": "Teamwork makes the dream work"}  # its thinking streamed as reasoning
    reasoning = "".join(c.reasoning for c in chunks if c.message_type == "reasoning_message")  # type: ignore[union-attr]
    assert reasoning == REPLY["thinking"]
    listed = client.agents.messages.list(agent.id, use_assistant_message=False, order="asc").items
    (call,) = [m for m in listed if m.message_type == "tool_call_message" and m.run_id == calls[0].run_id]
    assert {(c.id, c.otid) for c in calls} == {(call.id, call.otid)} and call.otid and call.otid[-1] == "1"
    (returned,) = [c for c in chunks if c.message_type == "tool_return_message"]
    assert returned.name == "send_message" and returned.otid and returned.otid[-1] == "0"  # type: ignore[union-attr]


def test_a_v2_turns_usage_has_no_context_size(client: Letta, mock_llm: MockLLM) -> None:
    # Letta's V2 loop never fills usage.context_tokens; its V3 loop gives the last call's total.
    agent = v2_agent(client)
    mock_llm.script(Reply.tool_call("send_message", REPLY), Reply.tool_call("send_message", REPLY))
    blocking = client.agents.messages.create(agent.id, input="Say the phrase.").usage
    assert blocking.context_tokens is None and blocking.prompt_tokens > 0 and blocking.step_count == 1
    chunks = list(client.agents.messages.stream(agent.id, input="Again.", stream_tokens=True))
    (streamed,) = [c for c in chunks if c.message_type == "usage_statistics"]
    assert streamed.context_tokens is None and streamed.total_tokens > 0  # type: ignore[union-attr]
    v1 = client.agents.create(agent_type="letta_v1_agent", model=MODEL, embedding=EMBEDDING)
    mock_llm.script(Reply.text("Teamwork makes the dream work"))
    usage = client.agents.messages.create(v1.id, input="Say the phrase.").usage
    assert usage.context_tokens == usage.total_tokens > 0
