"""What Letta 0.16.8's block tests (tests/managers/test_block_manager.py, test_agent_manager_block_update.py,
tests/test_block_manager_noop_update.py) pin down, as a letta-client user and the model see it on memlet.

A block edit through the API rebuilds the prompt of every agent holding the block the way Letta's
`rebuild_system_prompt_async` does: with the tool-rule section and, on Anthropic models, line-numbered values.
"""

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

SONNET = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
RULES = [{"type": "max_count_per_step", "tool_name": "memory_replace", "max_count_limit": 2}]


def system_sent(client: Letta, mock_llm: MockLLM, agent_id: str) -> str:
    """The system prompt the model is sent on the agent's next turn."""
    mock_llm.reset()
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    return "".join(part["text"] for part in mock_llm.requests[0]["system"])


class TestEditsTheModelDoesNotSee:
    """Letta rebuilds no prompt for a `/v1/blocks` PATCH that changes nothing the prompt shows (the same value,
    tags or metadata only), so the model's next request is the one before, byte for byte."""

    def test_tags_metadata_or_same_value_leave_the_prompt_alone(self, claude: Letta, mock_llm: MockLLM) -> None:
        shared = claude.blocks.create(label="team", value="Deadline: Friday")
        agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, block_ids=[shared.id], tool_rules=RULES)
        before = system_sent(claude, mock_llm, agent.id)
        claude.blocks.update(shared.id, tags=["ops"], metadata={"owner": "ann"})
        claude.blocks.update(shared.id, value="Deadline: Friday")
        assert system_sent(claude, mock_llm, agent.id) == before
        assert claude.blocks.retrieve(shared.id).tags == ["ops"]


class TestApiEditRebuildsAsLetta:
    def test_edit_by_label_shows_line_numbers_and_tool_rules(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude.agents.create(
            model=SONNET, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "a\nb"}], tool_rules=RULES
        )
        first = system_sent(claude, mock_llm, agent.id)
        assert "1→" not in first and "<tool_usage_rules>" not in first  # Letta's first compile has neither

        claude.agents.blocks.update("human", agent_id=agent.id, value="Ann\nlikes tea")
        rebuilt = system_sent(claude, mock_llm, agent.id)
        assert "<value>\n1→ Ann\n2→ likes tea\n</value>" in rebuilt
        assert "</memory_blocks>\n\n<tool_usage_rules>\n" in rebuilt
        assert "memory_replace" in rebuilt.split("<tool_usage_rules>")[1]

    def test_shared_block_edit_rebuilds_every_holder_the_same_way(self, claude: Letta, mock_llm: MockLLM) -> None:
        shared = claude.blocks.create(label="team", value="Deadline: Friday")
        agents = [
            claude.agents.create(model=SONNET, embedding=EMBEDDING, block_ids=[shared.id], tool_rules=RULES)
            for _ in range(2)
        ]
        claude.blocks.update(shared.id, value="Deadline: Monday")
        for agent in agents:
            rebuilt = system_sent(claude, mock_llm, agent.id)
            assert "<value>\n1→ Deadline: Monday\n</value>" in rebuilt
            assert "<tool_usage_rules>" in rebuilt

    def test_patch_by_label_rebuilds_that_agent_even_when_nothing_changes(
        self, claude: Letta, mock_llm: MockLLM
    ) -> None:
        agent = claude.agents.create(
            model=SONNET, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Ann"}], tool_rules=RULES
        )
        assert "1→ Ann" not in system_sent(claude, mock_llm, agent.id)
        claude.agents.blocks.update("human", agent_id=agent.id, value="Ann", metadata={"seen": True})
        rebuilt = system_sent(claude, mock_llm, agent.id)
        assert "<value>\n1→ Ann\n</value>" in rebuilt and "<tool_usage_rules>" in rebuilt
