"""Images given by URL in a message or a client's tool result, after Letta's `tests/test_message_helper.py`: a
local file URL is refused with Letta's 400, a data URL reaches the model as its bytes."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_messages_api import make_agent
from tests.api.test_turn_body_api import PNG, VIEW_IMAGE
from tests.mock_llm import MockLLM, Reply

FILE_REFUSED = (
    "INVALID_ARGUMENT: Unsupported image URL scheme 'file'. Only 'http', 'https', and 'data' image URLs are "
    "supported. Local file paths (file://) are not allowed."
)


def image(url: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "url", "url": url}}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def test_a_file_url_in_a_message_is_letta_s_400(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    content = [{"type": "text", "text": "describe this image"}, image("file:///etc/hostname")]
    response = http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": content}]})
    assert (response.status_code, response.json()) == (400, {"detail": FILE_REFUSED})
    assert mock_llm.requests == []


def test_a_file_url_in_a_tool_result_is_letta_s_400(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.tool_call("ViewImage", {"path": "cat.png"}, id="call_img"))
    client.agents.messages.create(agent.id, input="look", client_tools=[VIEW_IMAGE])  # type: ignore[list-item]
    result = {"type": "tool", "tool_call_id": "call_img", "tool_return": [image("file:///etc/passwd")]}
    body = {"messages": [{"type": "approval", "approvals": [{**result, "status": "success"}]}]}
    response = http.post(f"/v1/agents/{agent.id}/messages", json={**body, "client_tools": [VIEW_IMAGE]})
    assert (response.status_code, response.json()) == (400, {"detail": FILE_REFUSED})


def test_a_data_url_reaches_the_model_as_its_bytes(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("A cat."), Reply.text("Another."))
    client.agents.messages.create(
        agent.id,
        messages=[{"role": "user", "content": [image(f"data:image/png;base64,{PNG}")]}],  # type: ignore[list-item]
    )
    # A data URL that names no media type is read as Letta reads it: a JPEG.
    client.agents.messages.create(
        agent.id,
        messages=[{"role": "user", "content": [image(f"data:;base64,{PNG}")]}],  # type: ignore[list-item]
    )
    users = [m for m in mock_llm.requests[-1]["messages"] if m["role"] == "user"]
    assert [u["content"][0]["image_url"]["url"] for u in users[-2:]] == [
        f"data:image/png;base64,{PNG}",
        f"data:image/jpeg;base64,{PNG}",
    ]
