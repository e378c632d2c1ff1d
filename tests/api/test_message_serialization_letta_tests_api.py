"""What Claude is sent for stored messages, after Letta's `tests/test_message_serialization.py`.

A live server of its own has an Anthropic key pointed at the mock, so one agent can take a turn on an OpenAI handle
and the next on Claude (`override_model`); what reached the "model" is read back from the mock's recorded requests.
"""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

SONNET = "anthropic/claude-sonnet-4-5-20250929"
BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


@pytest.fixture
def chttp(claude_server: LiveServer, pg_uri: str, mock_llm: MockLLM) -> Iterator[httpx.Client]:
    mock_llm.reset()
    with httpx.Client(base_url=claude_server.base_url, timeout=60) as client:
        yield client
    reset_database(pg_uri)


def send(http: httpx.Client, agent_id: str, text: str, **extra: Any) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "content": text}], **extra}
    response = http.post(f"/v1/agents/{agent_id}/messages", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def tool_uses(request: dict[str, Any]) -> dict[str, Any]:
    return {
        block["id"]: block["input"]
        for message in request["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_use"
    }


def test_malformed_tool_arguments_reach_claude_wrapped(chttp: httpx.Client, mock_llm: MockLLM) -> None:
    created = chttp.post(
        "/v1/agents/",
        json={"model": "openai/gpt-4o-mini", "embedding": "openai/text-embedding-3-small", "memory_blocks": BLOCKS},
    )
    assert created.status_code == 200, created.text
    agent_id = created.json()["id"]
    cut_off = '{"label": "human", "new_string": "Likes te'
    mock_llm.script(
        Reply.tool_call("memory_insert", cut_off, id="call_cut"),
        Reply.tool_call("memory_insert", "[1, 2]", id="call_list"),
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}, id="call_ok"),
        Reply.text("Noted."),
    )
    send(http=chttp, agent_id=agent_id, text="I like tea")
    mock_llm.script(Reply.text("Hello again."))
    send(http=chttp, agent_id=agent_id, text="hi", override_model=SONNET)

    sent = mock_llm.requests[-1]
    assert sent["_api"] == "anthropic"
    # As Letta's Anthropic serializer does: what is not a JSON object goes out whole under one key, not as `{}`.
    assert tool_uses(sent) == {
        "call_cut": {"_malformed_tool_arguments": cut_off},
        "call_list": {"_malformed_tool_arguments": "[1, 2]"},
        "call_ok": {"label": "human", "new_string": "Likes tea."},
    }
