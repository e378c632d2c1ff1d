"""A user message of several text parts reaches the model part by part, as Letta sends it: OpenAI-compatible
models get a list of text parts (Letta's `fill_image_content_in_messages`), Claude one text block each (its
`to_anthropic_dict`); a system message's parts are joined by a blank line. memlet joined the parts into one text
with nothing between ("alpha" + "beta" read "alphabeta")."""

from typing import Any

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

EMBEDDING = "openai/text-embedding-3-small"
PARTS = [{"type": "text", "text": "alpha"}, {"type": "text", "text": "beta"}]


def send_parts(client: Letta, mock_llm: MockLLM, model: str) -> dict[str, Any]:
    agent = client.agents.create(model=model, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Bob"}])
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": PARTS}])  # type: ignore[list-item]
    listed = [m for m in client.agents.messages.list(agent.id) if m.message_type == "user_message"]
    assert [p.text for p in listed[-1].content] == ["alpha", "beta"]  # type: ignore[union-attr]
    return mock_llm.requests[-1]["messages"][-1]


def test_openai_gets_the_parts(client: Letta, mock_llm: MockLLM) -> None:
    assert send_parts(client, mock_llm, "openai/gpt-4o-mini") == {"role": "user", "content": PARTS}


def test_claude_gets_a_block_per_part(claude: Letta, mock_llm: MockLLM) -> None:
    sent = send_parts(claude, mock_llm, "anthropic/claude-sonnet-4-5-20250929")
    assert sent["role"] == "user"
    assert [(b["type"], b["text"]) for b in sent["content"]] == [("text", "alpha"), ("text", "beta")]


def test_a_system_messages_parts_are_joined_by_blank_lines(client: Letta, mock_llm: MockLLM) -> None:
    """Letta's `to_openai_dict` joins a system message's text parts with a blank line between."""
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding=EMBEDDING)
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent.id, messages=[{"role": "system", "content": PARTS}])  # type: ignore[list-item]
    assert mock_llm.requests[-1]["messages"][-1] == {"role": "system", "content": "alpha\n\nbeta"}
