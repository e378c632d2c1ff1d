"""The fields Letta Code puts in every turn body, through letta-client against the live server.

`client_skills` are listed in that request's system prompt only; images in user content reach the model as
image parts; `include_compaction_messages` streams a compaction as an event_message and a summary_message.
"""

import base64
import json
import uuid
from typing import Any

import pytest
from letta_client import Letta

from memlet.messages.views import otid_from_id
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
SKILLS = [
    {
        "name": "commit",
        "description": "Write a commit message\nmore detail",
        "location": "/home/u/.skills/commit/SKILL.md",
    },
    {"name": "review", "description": "Review a diff", "location": "/home/u/.skills/review/SKILL.md"},
]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-not-really-a-picture").decode()


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    blocks = [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}]
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=blocks, **kwargs)  # type: ignore[arg-type]


def system_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def stream_events(http: Any, agent_id: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with http.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=body) as response:
        assert response.status_code == 200, response.read()
        lines = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: {")]
    return [json.loads(line) for line in lines]


def test_client_skills_are_listed_in_that_request_only(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("one"), Reply.text("two"))
    client.agents.messages.create(agent.id, input="hi", extra_body={"client_skills": SKILLS})
    client.agents.messages.create(agent.id, input="again")
    with_skills, without = system_prompt(mock_llm.requests[0]), system_prompt(mock_llm.requests[1])
    section = with_skills[with_skills.index("<available_skills>") :]
    assert section == (
        "<available_skills>\n/home/u/.skills\n├── commit/\n│   └── SKILL.md (Write a commit message)\n"
        "└── review/\n    └── SKILL.md (Review a diff)\n</available_skills>"
    )
    assert "<available_skills>" not in without  # never stored in the agent's system message
    stored = client.agents.messages.list(agent.id, limit=1, order="asc").items[0]
    assert "available_skills" not in stored.model_dump_json()


def test_a_skill_block_is_listed_and_shadows_a_client_skill(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    block = client.blocks.create(label="skills/commit", value="how to commit", description="The agent's own way")
    client.agents.blocks.attach(block.id, agent_id=agent.id)
    client.agents.messages.create(agent.id, input="hi", extra_body={"client_skills": SKILLS})
    prompt = system_prompt(mock_llm.requests[-1])
    assert "${MEMORY_DIR}/skills\n└── commit/\n    └── SKILL.md (The agent's own way)" in prompt
    assert "Write a commit message" not in prompt
    assert "/home/u/.skills\n└── review/" in prompt


def test_images_in_user_content_reach_the_model(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    content = [
        {"type": "text", "text": "What is in these pictures?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]  # URL images are fetched under the outbound policy: tests/service/test_loop_model_request.py
    mock_llm.script(Reply.text("A cat."))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": content}])  # type: ignore[list-item]
    assert response.messages[-1].content == "A cat."  # type: ignore[union-attr]
    user = [m for m in mock_llm.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert user["content"] == [
        {"type": "text", "text": "What is in these pictures?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "auto"}},
    ]


def fill_window(client: Letta, mock_llm: MockLLM, agent_id: str) -> None:
    """Turns that leave the next one too big for a 4,000-token window."""
    for i in range(8):
        mock_llm.script(Reply.text(f"reply {i} " + "lorem ipsum " * 40))
        client.agents.messages.create(agent_id, input=f"message {i} " + "dolor sit amet " * 40)


@pytest.mark.parametrize("include", [True, False])
def test_compaction_is_streamed_as_letta_code_asks(client: Letta, http: Any, mock_llm: MockLLM, include: bool) -> None:
    agent = make_agent(client, context_window_limit=4000)
    fill_window(client, mock_llm, agent.id)
    summaries_before = len([r for r in mock_llm.requests if not r.get("tools")])
    mock_llm.script(Reply.text("The summary of it all."), Reply.text("fine"))
    body = {"input": "and now? " + "dolor " * 600, "stream_tokens": True, "include_compaction_messages": include}
    events = stream_events(http, agent.id, body)
    assert len([r for r in mock_llm.requests if not r.get("tools")]) > summaries_before, "it was compacted"
    kinds = [e.get("message_type") for e in events if e.get("message_type") != "ping"]
    stored = client.agents.messages.list(agent.id, limit=100).items
    if include:
        event = next(e for e in events if e.get("message_type") == "event_message")
        assert event["event_type"] == "compaction"
        assert event["event_data"]["context_window"] == 4000
        assert uuid.UUID(event["id"]).version == 4  # a bare uuid4, as Letta's (no stored message has it)
        summary = next(e for e in events if e.get("message_type") == "summary_message")
        assert kinds.index("event_message") < kinds.index("summary_message") < kinds.index("assistant_message")
        assert summary["compaction_stats"]["trigger"] == "context_window_exceeded"
        assert summary["summary"] == "The summary of it all."  # the text alone, not the stored system alert
        assert summary["step_id"] == event["step_id"]
    else:
        assert "event_message" not in kinds and "summary_message" not in kinds
        summary = next(e for e in events if e.get("message_type") == "user_message")  # as Letta shows it then
        assert json.loads(summary["content"])["type"] == "system_alert"
    assert summary["otid"] == otid_from_id(summary["id"], 0)
    # Listed later, the row is a user_message holding the packed alert, with no otid of its own.
    [listed] = [m for m in stored if m.id == summary["id"]]
    assert listed.message_type == "user_message" and listed.otid is None
    assert json.loads(listed.content)["type"] == "system_alert"  # type: ignore[union-attr, arg-type]
    assert "The summary of it all." in listed.content  # type: ignore[union-attr, operator]


def test_override_model_in_a_conversation_turn(client: Letta, http: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conversation = http.post("/v1/conversations/", params={"agent_id": agent.id}, json={}).json()
    mock_llm.script(Reply.text("from the bigger model"), Reply.text("back to the agent's model"))
    for override in ("openai/gpt-4o", None):
        body: dict[str, Any] = {"input": "hi", "streaming": False, **({"override_model": override} if override else {})}
        response = http.post(f"/v1/conversations/{conversation['id']}/messages", json=body)
        assert response.status_code == 200, response.text
    assert [r["model"] for r in mock_llm.requests] == ["gpt-4o", "gpt-4o-mini"]
    assert client.agents.retrieve(agent.id).model == MODEL  # never written back


def test_compaction_in_a_conversation_is_streamed_and_stays_there(client: Letta, http: Any, mock_llm: MockLLM) -> None:
    agent = make_agent(client, context_window_limit=4000)
    conversation = http.post("/v1/conversations/", params={"agent_id": agent.id}, json={}).json()["id"]
    url = f"/v1/conversations/{conversation}/messages"
    for i in range(8):
        mock_llm.script(Reply.text(f"reply {i} " + "lorem ipsum " * 40))
        body = {"input": f"message {i} " + "dolor sit amet " * 40, "streaming": False}
        assert http.post(url, json=body).status_code == 200
    mock_llm.script(Reply.text("The summary of the thread."), Reply.text("fine"))
    body = {"input": "and now? " + "dolor " * 600, "streaming": True, "stream_tokens": True}
    with http.stream("POST", url, json={**body, "include_compaction_messages": True}) as response:
        assert response.status_code == 200, response.read()
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
    kinds = [e.get("message_type") for e in events if e.get("message_type") != "ping"]
    assert kinds.index("event_message") < kinds.index("summary_message") < kinds.index("assistant_message")
    summary = next(e for e in events if e.get("message_type") == "summary_message")
    assert "The summary of the thread." in summary["summary"]
    # The summary opens the conversation's window, and the agent's own default thread never saw it.
    assert "The summary of the thread." in json.dumps(mock_llm.requests[-1]["messages"][1])
    mock_llm.script(Reply.text("default"))
    client.agents.messages.create(agent.id, input="hello default")
    assert "The summary of the thread." not in json.dumps(mock_llm.requests[-1]["messages"])


VIEW_IMAGE = {"name": "ViewImage", "description": "Look at an image file.", "parameters": {"type": "object"}}


def test_a_client_tool_return_with_an_image(client: Letta, mock_llm: MockLLM) -> None:
    # Letta Code's ViewImage answers with text and image parts; a chat-completions model gets the text and a
    # placeholder (an Anthropic one the image: test_tool_return_images_api.py).
    agent = make_agent(client)
    mock_llm.script(Reply.tool_call("ViewImage", {"path": "cat.png"}, id="call_img"))
    first = client.agents.messages.create(agent.id, input="look", client_tools=[VIEW_IMAGE])  # type: ignore[list-item]
    assert first.stop_reason.stop_reason == "requires_approval"
    parts = [
        {"type": "text", "text": "cat.png, 2x2 pixels"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    result = {"type": "tool", "tool_call_id": "call_img", "tool_return": parts, "status": "success"}
    mock_llm.script(Reply.text("A tiny cat."))
    response = client.agents.messages.create(
        agent.id,
        messages=[{"type": "approval", "approvals": [result]}],  # type: ignore[list-item]
        client_tools=[VIEW_IMAGE],  # type: ignore[list-item]
    )
    assert response.stop_reason.stop_reason == "end_turn"
    (tool,) = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert tool["content"] == "cat.png, 2x2 pixels [Image omitted]"  # not packed, as Letta sends parts
    assert PNG not in json.dumps(mock_llm.requests[1])
