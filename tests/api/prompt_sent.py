"""The system prompt an agent's next turn sends the model, read from the mock's recorded request (shared by the
tests of prompt rebuilds after block edits and agent PATCHes)."""

import re

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

SONNET = "anthropic/claude-sonnet-4-5-20250929"
GPT = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
RULES = [{"type": "max_count_per_step", "tool_name": "memory_replace", "max_count_limit": 2}]
RECOMPILED = re.compile(r"^- System prompt last recompiled: (.*)$", re.MULTILINE)


def claude_system_sent(client: Letta, mock_llm: MockLLM, agent_id: str) -> str:
    """The system prompt an Anthropic agent's next turn sends the model."""
    mock_llm.reset()
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    return "".join(part["text"] for part in mock_llm.requests[0]["system"])


def openai_system_sent(client: Letta, mock_llm: MockLLM, agent_id: str) -> str:
    """The system prompt an OpenAI-compatible agent's next turn sends the model."""
    mock_llm.reset()
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    content = mock_llm.requests[0]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def renamed_by_the_model(client: Letta, mock_llm: MockLLM, agent_id: str) -> None:
    """A turn in which the model's memory_replace turns "Bob" into "Ann" in the agent's `human` block."""
    mock_llm.reset()
    mock_llm.script(
        Reply.tool_call("memory_replace", {"label": "human", "old_string": "Bob", "new_string": "Ann"}),
        Reply.text("noted"),
    )
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "I am Ann"}])
