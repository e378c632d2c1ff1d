"""What Letta 0.16.8's block tests (tests/managers/test_block_manager.py, test_agent_manager_block_update.py,
tests/test_block_manager_noop_update.py) pin down, as a letta-client user and the model see it on memlet.

A block edit through the API rebuilds the prompt of every agent holding the block the way Letta's
`rebuild_system_prompt_async` does: with the tool-rule section and, on Anthropic models, line-numbered values.
"""

import time

from letta_client import Letta

from tests.api.prompt_sent import (
    EMBEDDING,
    GPT,
    RECOMPILED,
    RULES,
    SONNET,
    claude_system_sent,
    openai_system_sent,
    renamed_by_the_model,
)
from tests.mock_llm import MockLLM


class TestEditsTheModelDoesNotSee:
    """Letta rebuilds no prompt for a `/v1/blocks` PATCH that changes nothing the prompt shows (the same value,
    tags or metadata only), so the model's next request is the one before, byte for byte."""

    def test_tags_metadata_or_same_value_leave_the_prompt_alone(self, claude: Letta, mock_llm: MockLLM) -> None:
        shared = claude.blocks.create(label="team", value="Deadline: Friday")
        agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, block_ids=[shared.id], tool_rules=RULES)
        before = claude_system_sent(claude, mock_llm, agent.id)
        claude.blocks.update(shared.id, tags=["ops"], metadata={"owner": "ann"})
        claude.blocks.update(shared.id, value="Deadline: Friday")
        assert claude_system_sent(claude, mock_llm, agent.id) == before
        assert claude.blocks.retrieve(shared.id).tags == ["ops"]


class TestApiEditRebuildsAsLetta:
    def test_edit_by_label_shows_line_numbers_and_tool_rules(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude.agents.create(
            model=SONNET, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "a\nb"}], tool_rules=RULES
        )
        first = claude_system_sent(claude, mock_llm, agent.id)
        assert "1→" not in first and "<tool_usage_rules>" not in first  # Letta's first compile has neither

        claude.agents.blocks.update("human", agent_id=agent.id, value="Ann\nlikes tea")
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
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
            rebuilt = claude_system_sent(claude, mock_llm, agent.id)
            assert "<value>\n1→ Deadline: Monday\n</value>" in rebuilt
            assert "<tool_usage_rules>" in rebuilt

    def test_patch_by_label_rebuilds_that_agent_even_when_nothing_changes(
        self, claude: Letta, mock_llm: MockLLM
    ) -> None:
        agent = claude.agents.create(
            model=SONNET, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Ann"}], tool_rules=RULES
        )
        assert "1→ Ann" not in claude_system_sent(claude, mock_llm, agent.id)
        claude.agents.blocks.update("human", agent_id=agent.id, value="Ann", metadata={"seen": True})
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
        assert "<value>\n1→ Ann\n</value>" in rebuilt and "<tool_usage_rules>" in rebuilt


class TestAttachDetachDeleteReachTheModel:
    """README compatibility note: memlet rebuilds the prompts concerned when a block is attached, detached or
    deleted through the API; Letta left the stored prompt as it was until the agent's next memory edit."""

    def test_next_request_shows_the_change(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, memory_blocks=[], tool_rules=RULES)
        notes = claude.blocks.create(label="notes", value="PELICAN-42")
        claude.agents.blocks.attach(notes.id, agent_id=agent.id)
        assert "<value>\n1→ PELICAN-42\n</value>" in claude_system_sent(claude, mock_llm, agent.id)
        claude.agents.blocks.detach(notes.id, agent_id=agent.id)
        assert "PELICAN-42" not in claude_system_sent(claude, mock_llm, agent.id)
        claude.agents.blocks.attach(notes.id, agent_id=agent.id)
        claude.blocks.delete(notes.id)
        assert "PELICAN-42" not in claude_system_sent(claude, mock_llm, agent.id)

    def test_api_rebuild_keeps_the_last_recompile_time(self, client: Letta, mock_llm: MockLLM) -> None:
        """Letta's API rebuild showed the time the system message was first written (the agent's creation),
        turning the clock back after a memory edit; memlet keeps the time of the last recompile."""
        agent = client.agents.create(model=GPT, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Bob"}])
        created = RECOMPILED.findall(openai_system_sent(client, mock_llm, agent.id))
        time.sleep(1.1)
        renamed_by_the_model(client, mock_llm, agent.id)
        edited = RECOMPILED.findall(openai_system_sent(client, mock_llm, agent.id))
        assert edited != created
        client.agents.blocks.update("human", agent_id=agent.id, value="Ann, from Oslo")
        rebuilt = openai_system_sent(client, mock_llm, agent.id)
        assert "Ann, from Oslo" in rebuilt and RECOMPILED.findall(rebuilt) == edited
