"""A conversation's first system message is compiled as Letta compiles it when the conversation is created: no
tool-rule section, no line numbers (which a Claude agent's own prompt has), and the agent's whole message count as
its previous messages. Letta Code opens a conversation for every session, so this is the prompt its model reads."""

from typing import Any

from letta_client import Letta

from tests.api.test_anthropic_api import chttp, make_agent, say  # noqa: F401 (fixtures)
from tests.mock_llm import MockLLM, Reply

RULES = [{"type": "max_count_per_step", "tool_name": "conversation_search", "max_count_limit": 2}]


def system_text(sent: dict[str, Any]) -> str:
    return "".join(part["text"] for part in sent["system"])


def test_the_opening_system_message_has_no_rules_or_line_numbers(claude: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(claude, tool_rules=RULES)
    mock_llm.script(Reply.text("hello Bob"))
    say(claude, agent.id, "hi")

    count = len(claude.agents.messages.list(agent.id, limit=1000).items)
    conversation = claude.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("hello again"))
    claude.conversations.messages.create(conversation.id, messages=[{"role": "user", "content": "hi"}], streaming=False)
    opening = system_text(mock_llm.requests[-1])
    assert conversation.id in opening
    assert "The human's name is Bob." in opening and "→" not in opening
    assert "<tool_usage_rules>" not in opening
    assert f"- {count} previous messages between you and the user" in opening
