"""A client-side tool answered with text and image parts (Letta's integration_test_multi_modal_tool_returns.py),
through letta-client against the live server.

As in Letta 0.16.8: the parts are stored as given and listed in `tool_returns[].tool_return` (the deprecated
`tool_return` is their text with a placeholder per image); an Anthropic model gets the image in its tool_result;
a chat-completions model gets the text with the placeholder, not packed as `{"status", "message", "time"}`.
"""

import base64
import json
from typing import Any

from letta_client import Letta

from tests.api.test_anthropic_api import SONNET
from tests.mock_llm import MOCK_IMAGE, MockLLM, Reply

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-secret-FIREBRAWL").decode()
SECRET_IMAGE = {
    "name": "get_secret_image",
    "description": "Retrieves a secret image with hidden text.",
    "parameters": {"type": "object", "properties": {}, "required": []},
}
PARTS = [
    {"type": "text", "text": "Here is the secret image:"},
    {"type": "image", "source": {"type": "base64", "data": PNG, "media_type": "image/png"}},
]
SHOWN = "Here is the secret image: [Image omitted]"


def answer_with_image(client: Letta, model: str, mock_llm: MockLLM, call_id: str) -> Any:
    """Create a bare agent on `model`, have it call the client tool, answer with PARTS; the agent."""
    agent = client.agents.create(
        model=model,
        embedding="openai/text-embedding-3-small",
        include_base_tools=False,
        include_base_tool_rules=False,
    )
    mock_llm.script(Reply.tool_call("get_secret_image", {}, id=call_id), Reply.text("It says FIREBRAWL."))
    first = client.agents.messages.create(
        agent.id,
        messages=[{"role": "user", "content": "Call the get_secret_image function now."}],
        client_tools=[SECRET_IMAGE],  # type: ignore[list-item]
    )
    assert first.stop_reason.stop_reason == "requires_approval"
    (request,) = [m for m in first.messages if m.message_type == "approval_request_message"]
    assert request.tool_call.tool_call_id == call_id
    result = {"type": "tool", "tool_call_id": call_id, "tool_return": PARTS, "status": "success"}
    second = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": [result]}])  # type: ignore[list-item]
    assert second.stop_reason.stop_reason == "end_turn"
    assert [m.content for m in second.messages if m.message_type == "assistant_message"] == ["It says FIREBRAWL."]
    return agent


def test_an_anthropic_model_sees_the_image(claude: Letta, mock_llm: MockLLM) -> None:
    answer_with_image(claude, SONNET, mock_llm, "toolu_img")
    (turn,) = [m for m in mock_llm.requests[1]["messages"] if any(b["type"] == "tool_result" for b in m["content"])]
    (result,) = [b for b in turn["content"] if b["type"] == "tool_result"]
    assert result["tool_use_id"] == "toolu_img"
    assert result["content"] == [
        {"type": "text", "text": "Here is the secret image:"},
        {"type": "image", "source": {"type": "base64", "data": PNG, "media_type": "image/png"}},
    ]


def test_a_chat_completions_model_gets_the_text_with_a_placeholder(client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    answer_with_image(client, "openai/gpt-4o-mini", mock_llm, "call_img")
    (tool,) = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert tool == {"role": "tool", "tool_call_id": "call_img", "content": SHOWN}
    assert PNG not in json.dumps(mock_llm.requests[1])


def test_the_parts_are_listed_as_given(client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = answer_with_image(client, "openai/gpt-4o-mini", mock_llm, "call_img")
    history = client.agents.messages.list(agent.id, order="asc").items
    (shown,) = [m for m in history if m.message_type == "tool_return_message"]
    assert shown.tool_return == SHOWN and shown.status == "success" and shown.tool_call_id == "call_img"
    (returned,) = shown.tool_returns or []
    assert [part.model_dump(exclude_none=True) for part in returned.tool_return] == PARTS  # type: ignore[union-attr]
    (response,) = [m for m in history if m.message_type == "approval_response_message"]
    assert response.approvals[0].tool_return == SHOWN  # type: ignore[index,union-attr]


def test_an_image_given_by_url_is_fetched_and_kept_as_data(claude: Letta, mock_llm: MockLLM) -> None:
    url = mock_llm.base_url.removesuffix("/v1") + "/_mock/image.png"
    agent = claude.agents.create(model=SONNET, embedding="openai/text-embedding-3-small", include_base_tools=False)
    mock_llm.script(Reply.tool_call("get_secret_image", {}, id="toolu_url"), Reply.text("A picture."))
    first = claude.agents.messages.create(agent.id, input="Look.", client_tools=[SECRET_IMAGE])  # type: ignore[list-item]
    assert first.stop_reason.stop_reason == "requires_approval"
    image = {"type": "image", "source": {"type": "url", "url": url}}
    result = {"type": "tool", "tool_call_id": "toolu_url", "tool_return": [image], "status": "success"}
    claude.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": [result]}])  # type: ignore[list-item]
    data = {"type": "base64", "data": base64.b64encode(MOCK_IMAGE).decode(), "media_type": "image/png"}
    sent = json.dumps(mock_llm.requests[1]["messages"])
    assert json.dumps({"type": "image", "source": data}) in sent and url not in sent
    history = claude.agents.messages.list(agent.id, order="asc").items
    (shown,) = [m for m in history if m.message_type == "tool_return_message"]
    (part,) = shown.tool_returns[0].tool_return  # type: ignore[index,union-attr]
    assert part.source.model_dump(exclude_none=True) == data  # type: ignore[union-attr]
