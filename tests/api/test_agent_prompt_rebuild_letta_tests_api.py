"""What the model sees after an agent PATCH, a group created with shared blocks, or a block that reaches a
sleeptime agent, as Letta 0.16.8's rebuild (`rebuild_system_prompt_async`) compiles a prompt.

memlet rebuilds the prompt at once on those API changes (README: "Blocks and the prompt"); the text is that of
Letta's rebuilds, not of its first compile: the tool-rule section and, on Anthropic models, line-numbered values.
The last recompile time stays as it was.
"""

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
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
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply


@pytest.fixture
def claude_http(claude: Letta, claude_server: LiveServer) -> Iterator[httpx.Client]:
    """Raw HTTP on the Anthropic server (letta-client has no groups or preview methods)."""
    with httpx.Client(base_url=claude_server.base_url, timeout=30) as http:
        yield http


def claude_agent(client: Letta, **extra: Any) -> Any:
    return client.agents.create(
        model=SONNET,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "human", "value": "a\nb"}],
        tool_rules=RULES,
        **extra,
    )


class TestAgentPatchRebuildsAsLetta:
    @pytest.mark.parametrize(
        "change",
        [
            {"system": "You are Kestrel, a terse assistant."},
            {"timezone": "Europe/Oslo"},
            {"tool_rules": [{"type": "max_count_per_step", "tool_name": "memory_insert", "max_count_limit": 3}]},
        ],
        ids=["system", "timezone", "tool_rules"],
    )
    def test_patch_shows_line_numbers_and_tool_rules(
        self, claude: Letta, mock_llm: MockLLM, change: dict[str, Any]
    ) -> None:
        agent = claude_agent(claude)
        first = claude_system_sent(claude, mock_llm, agent.id)
        assert "1→" not in first and "<tool_usage_rules>" not in first  # Letta's first compile has neither

        claude.agents.update(agent.id, **change)
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
        assert "<value>\n1→ a\n2→ b\n</value>" in rebuilt
        rules = rebuilt.split("</memory_blocks>\n\n<tool_usage_rules>\n")[1]
        assert ("memory_insert" if "tool_rules" in change else "memory_replace") in rules
        if "system" in change:
            assert rebuilt.startswith("You are Kestrel, a terse assistant.")

    def test_block_ids_patch_shows_the_new_blocks_numbered(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude_agent(claude)
        notes = claude.blocks.create(label="notes", value="PELICAN-42\nHERON-7")
        claude.agents.update(agent.id, block_ids=[notes.id])
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
        assert "<notes>" in rebuilt and "<human>" not in rebuilt
        assert "<value>\n1→ PELICAN-42\n2→ HERON-7\n</value>" in rebuilt
        assert "<tool_usage_rules>" in rebuilt

    def test_clearing_the_rules_drops_the_section(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude_agent(claude)
        claude.agents.update(agent.id, system="You are Kestrel.")
        assert "<tool_usage_rules>" in claude_system_sent(claude, mock_llm, agent.id)
        claude.agents.update(agent.id, tool_rules=[])
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
        assert "<tool_usage_rules>" not in rebuilt and "1→ a" in rebuilt

    def test_patch_keeps_the_last_recompile_time(self, client: Letta, mock_llm: MockLLM) -> None:
        """The prompt shows the time of its last recompile (the memory edit), not the PATCH's."""
        agent = client.agents.create(
            model=GPT, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Bob"}], tool_rules=RULES
        )
        time.sleep(1.1)
        renamed_by_the_model(client, mock_llm, agent.id)
        edited = RECOMPILED.findall(openai_system_sent(client, mock_llm, agent.id))
        time.sleep(1.1)
        client.agents.update(agent.id, system="You are Kestrel.")
        rebuilt = openai_system_sent(client, mock_llm, agent.id)
        assert rebuilt.startswith("You are Kestrel.") and "<tool_usage_rules>" in rebuilt
        assert RECOMPILED.findall(rebuilt) == edited


class TestSharedBlocksReachTheModelAsLettaRebuilds:
    def test_group_shared_blocks_are_numbered_with_the_rules(
        self, claude: Letta, claude_http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        team = claude.blocks.create(label="team", value="Deadline: Friday\nOwner: Ann")
        workers = [claude_agent(claude) for _ in range(2)]
        body = {"agent_ids": [w.id for w in workers], "description": "", "shared_block_ids": [team.id]}
        assert claude_http.post("/v1/groups/", json=body).status_code == 200
        for worker in workers:
            rebuilt = claude_system_sent(claude, mock_llm, worker.id)
            assert "<value>\n1→ Deadline: Friday\n2→ Owner: Ann\n</value>" in rebuilt
            assert "<value>\n1→ a\n2→ b\n</value>" in rebuilt
            assert "memory_replace" in rebuilt.split("<tool_usage_rules>\n")[1]

    @pytest.mark.parametrize("how", ["attach", "patch"])
    def test_a_block_attached_to_the_main_agent_reaches_its_sleeptime_agent_numbered(
        self, claude: Letta, claude_http: httpx.Client, how: str
    ) -> None:
        """Through the attach route, as Letta; through a PATCH of `block_ids` too (README compatibility note:
        Letta's PATCH left the sleeptime agent without the block)."""
        main = claude.agents.create(
            name="main", model=SONNET, embedding=EMBEDDING, enable_sleeptime=True, memory_blocks=[]
        )
        (helper,) = claude.agents.list(name="main-sleeptime")
        notes = claude.blocks.create(label="notes", value="PELICAN-42\nHERON-7")
        if how == "attach":
            claude.agents.blocks.attach(notes.id, agent_id=main.id)
        else:
            claude.agents.update(main.id, block_ids=[notes.id])
        assert notes.id in {b.id for b in claude.agents.blocks.list(helper.id).items}
        response = claude_http.post(
            f"/v1/agents/{helper.id}/messages/preview-raw-payload",
            json={"messages": [{"role": "user", "content": "hi"}]},
        )
        assert response.status_code == 200, response.text
        system = "".join(part["text"] for part in response.json()["system"])
        assert "<value>\n1→ PELICAN-42\n2→ HERON-7\n</value>" in system
        assert "<tool_usage_rules>" in system


class TestAnotherHoldersEdit:
    def test_reaches_the_holder_with_rules_and_its_recompile_time_kept(self, client: Letta, mock_llm: MockLLM) -> None:
        """Letta rebuilds every other holder of a block an agent's memory tool edits, with `update_timestamp=False`
        (`update_block_async`); memlet rebuilds the holder's prompt at its next turn, keeping its recompile time."""
        team = client.blocks.create(label="team", value="Deadline: Friday")
        editor, holder = (
            client.agents.create(model=GPT, embedding=EMBEDDING, block_ids=[team.id], tool_rules=RULES)
            for _ in range(2)
        )
        before = RECOMPILED.findall(openai_system_sent(client, mock_llm, holder.id))
        time.sleep(1.1)
        mock_llm.reset()
        mock_llm.script(
            Reply.tool_call("memory_replace", {"label": "team", "old_string": "Friday", "new_string": "Monday"}),
            Reply.text("noted"),
        )
        client.agents.messages.create(editor.id, messages=[{"role": "user", "content": "It moved to Monday"}])
        rebuilt = openai_system_sent(client, mock_llm, holder.id)
        assert "Deadline: Monday" in rebuilt and "<tool_usage_rules>" in rebuilt
        assert RECOMPILED.findall(rebuilt) == before


class TestRebuildRoutes:
    """Regression: the reset and recompile routes rebuild as Letta's do (`rebuild_system_prompt_async` with
    `force=True`): reset with a new recompile time, recompile with it only when `update_timestamp` is set."""

    def test_reset_rebuilds_with_rules_and_a_new_time(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = claude_agent(claude)
        created = RECOMPILED.findall(claude_system_sent(claude, mock_llm, agent.id))
        time.sleep(1.1)
        claude.agents.messages.reset(agent.id)
        rebuilt = claude_system_sent(claude, mock_llm, agent.id)
        assert "<value>\n1→ a\n2→ b\n</value>" in rebuilt and "<tool_usage_rules>" in rebuilt
        assert RECOMPILED.findall(rebuilt) != created

    def test_recompile_moves_the_time_only_when_asked(
        self, claude: Letta, claude_http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = claude_agent(claude)
        created = RECOMPILED.findall(claude_system_sent(claude, mock_llm, agent.id))
        time.sleep(1.1)
        kept = claude_http.post(f"/v1/agents/{agent.id}/recompile").json()
        assert "<value>\n1→ a\n2→ b\n</value>" in kept and "<tool_usage_rules>" in kept
        assert RECOMPILED.findall(kept) == created
        assert claude_system_sent(claude, mock_llm, agent.id) == kept
        moved = claude_http.post(f"/v1/agents/{agent.id}/recompile", params={"update_timestamp": True}).json()
        assert RECOMPILED.findall(moved) != created
