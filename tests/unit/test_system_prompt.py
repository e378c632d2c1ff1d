"""System prompt compilation: Letta's exact layout, metadata lines, timezones and section splitting."""

import json
from datetime import UTC, datetime

import pytest

from memlet.errors import BadRequestError
from memlet.prompt.prompts import default_system_prompt
from memlet.prompt.system_prompt import (
    PromptBlock,
    compile_system_prompt,
    format_timestamp,
    split_sections,
    uses_line_numbers,
)
from tests.shared_paths import SAMPLES

AGENT_ID = "agent-1d1ff1b3-6cf6-4b22-ac35-10ba953d7730"
WHEN = datetime(2026, 11, 22, 3, 3, 32, tzinfo=UTC)
BASE = "<base_instructions>\nBe helpful.\n</base_instructions>"
PERSONA = PromptBlock(label="persona", value="I am Sam.", limit=5000, description="Who you are.")
HUMAN = PromptBlock(label="human", value="Name: Bob\nLikes: go", limit=100000, description="The user.")

TWO_BLOCKS = """\
<base_instructions>
Be helpful.
</base_instructions>

<memory_blocks>
The following memory blocks are currently engaged in your core memory unit:

<persona>
<description>
Who you are.
</description>
<metadata>
- chars_current=9
- chars_limit=5000
</metadata>
<value>
I am Sam.
</value>
</persona>

<human>
<description>
The user.
</description>
<metadata>
- chars_current=19
- chars_limit=100000
</metadata>
<value>
Name: Bob
Likes: go
</value>
</human>

</memory_blocks>

<memory_metadata>
- AGENT_ID: agent-1d1ff1b3-6cf6-4b22-ac35-10ba953d7730
- CONVERSATION_ID: default
- System prompt last recompiled: 2026-11-22 03:03:32 AM UTC+0000
- 0 previous messages between you and the user are stored in recall memory
</memory_metadata>"""


def compile_prompt(**overrides: object) -> str:
    arguments: dict[str, object] = {
        "base": BASE,
        "blocks": [PERSONA, HUMAN],
        "agent_id": AGENT_ID,
        "agent_type": "letta_v1_agent",
        "timezone": "UTC",
        "recompiled_at": WHEN,
        "recall_count": 0,
        "archival_count": 0,
        "archival_tags": [],
    }
    arguments.update(overrides)
    return compile_system_prompt(**arguments)  # type: ignore[arg-type]


class TestMemoryBlocks:
    def test_two_blocks_exact_layout(self) -> None:
        assert compile_prompt() == TWO_BLOCKS

    def test_matches_letta_sample_byte_for_byte(self) -> None:
        agent = json.loads((SAMPLES / "agent_state.json").read_text())
        messages = json.loads((SAMPLES / "list_messages.json").read_text())
        stored = next(m["content"] for m in messages if m["message_type"] == "system_message")
        blocks = [
            PromptBlock(
                label=b["label"],
                value=b["value"],
                limit=b["limit"],
                description=b["description"],
                read_only=b["read_only"],
            )
            for b in agent["memory"]["blocks"]
        ]
        prompt = compile_prompt(
            base=agent["system"], blocks=blocks, agent_id=agent["id"], timezone=agent["timezone"], archival_count=2
        )
        assert prompt == stored

    def test_read_only_line_precedes_counts(self) -> None:
        block = PromptBlock(label="policy", value="abc", limit=10, description="d", read_only=True)
        prompt = compile_prompt(blocks=[block])
        assert "<metadata>\n- read_only=true\n- chars_current=3\n- chars_limit=10\n</metadata>" in prompt

    def test_missing_limit_and_description_render_as_zero_and_empty(self) -> None:
        prompt = compile_prompt(blocks=[PromptBlock(label="notes", value="", limit=None)])
        assert "<notes>\n<description>\n\n</description>\n<metadata>\n- chars_current=0\n- chars_limit=0\n" in prompt
        assert "<value>\n\n</value>\n</notes>" in prompt

    def test_line_numbered_variant(self) -> None:
        prompt = compile_prompt(blocks=[HUMAN], line_numbers=True)
        section = split_sections(prompt)["core_memory"]
        assert section is not None
        assert "</metadata>\n<warning>\n# NOTE: " in section
        assert "</warning>\n<value>\n1→ Name: Bob\n2→ Likes: go\n</value>\n</human>" in section
        assert "- chars_current=19" in section

    def test_line_numbered_variant_keeps_its_wrapper_without_blocks(self) -> None:
        # Letta 0.16.8 writes the line-numbered section even with no block; the plain one is left out.
        intro = "The following memory blocks are currently engaged in your core memory unit:"
        numbered = compile_prompt(blocks=[], line_numbers=True)
        assert numbered.startswith(f"{BASE}\n\n<memory_blocks>\n{intro}\n\n\n</memory_blocks>\n\n<memory_metadata>\n")
        assert compile_prompt(blocks=[]).startswith(f"{BASE}\n\n\n\n<memory_metadata>\n")

    def test_react_and_workflow_agents_have_no_blocks(self) -> None:
        for agent_type in ("react_agent", "workflow_agent"):
            prompt = compile_prompt(agent_type=agent_type)
            assert "<memory_blocks>" not in prompt
            assert "I am Sam." not in prompt
            assert prompt.startswith(BASE + "\n\n\n\n<memory_metadata>\n")

    def test_core_memory_placeholder_is_replaced_in_place(self) -> None:
        prompt = compile_prompt(base="Intro\n{CORE_MEMORY}\nOutro", blocks=[PERSONA])
        assert prompt.startswith("Intro\n<memory_blocks>\n")
        assert prompt.endswith("</memory_metadata>\nOutro")
        assert "{CORE_MEMORY}" not in prompt


class TestToolUsageRules:
    def test_rules_section_sits_between_blocks_and_metadata(self) -> None:
        rules = "<tool_rule>\nsend_message ends your turn.\n</tool_rule>"
        prompt = compile_prompt(tool_rules_text=rules)
        assert "</memory_blocks>\n\n<tool_usage_rules>\n" in prompt
        assert prompt.count("<tool_usage_rules>") == 1
        assert f"\n\n{rules}\n</tool_usage_rules>\n\n<memory_metadata>" in prompt

    def test_empty_rules_add_nothing(self) -> None:
        assert compile_prompt(tool_rules_text="") == TWO_BLOCKS


class TestMemoryMetadata:
    def test_archival_count_line_only_when_positive(self) -> None:
        line = "- 7 total memories you created are stored in archival memory (use tools to access them)\n"
        assert line in compile_prompt(archival_count=7)
        assert "archival memory" not in compile_prompt(archival_count=0)

    def test_archival_tags_line_only_when_present(self) -> None:
        prompt = compile_prompt(archival_count=3, archival_tags=["work", "ideas"])
        assert prompt.endswith("- Available archival memory tags: work, ideas\n</memory_metadata>")
        assert "Available archival memory tags" not in compile_prompt(archival_count=3)

    def test_recall_count_and_conversation_id(self) -> None:
        prompt = compile_prompt(recall_count=12, conversation_id="conv-123")
        assert "- CONVERSATION_ID: conv-123\n" in prompt
        assert "- 12 previous messages between you and the user are stored in recall memory\n" in prompt


class TestTimestamp:
    def test_agent_timezone_is_used(self) -> None:
        assert format_timestamp(WHEN, "America/Los_Angeles") == "2026-11-21 07:03:32 PM PST-0800"
        assert "last recompiled: 2026-11-22 12:03:32 PM JST+0900" in compile_prompt(timezone="Asia/Tokyo")

    @pytest.mark.parametrize("timezone", [None, "", "Not/AZone", "../etc"])
    def test_invalid_or_missing_timezone_falls_back_to_utc(self, timezone: str | None) -> None:
        assert format_timestamp(WHEN, timezone) == "2026-11-22 03:03:32 AM UTC+0000"

    def test_naive_datetime_is_taken_as_utc(self) -> None:
        assert format_timestamp(datetime(2026, 1, 2, 15, 4, 5), "UTC") == "2026-01-02 03:04:05 PM UTC+0000"


class TestUsesLineNumbers:
    def test_only_anthropic_with_listed_types(self) -> None:
        assert uses_line_numbers("letta_v1_agent", "anthropic")
        assert uses_line_numbers("sleeptime_agent", "anthropic")
        assert not uses_line_numbers("letta_v1_agent", "openai")
        assert not uses_line_numbers("memgpt_agent", "anthropic")


class TestSplitSections:
    def test_round_trip(self) -> None:
        rules = "<tool_rule>\nx\n</tool_rule>"
        prompt = compile_prompt(tool_rules_text=rules, archival_count=1)
        parts = split_sections(prompt)
        assert parts["system_prompt"] == BASE
        assert parts["core_memory"] is not None
        assert parts["core_memory"].startswith("<memory_blocks>\n")
        assert parts["core_memory"].endswith("</human>\n\n</memory_blocks>")
        assert parts["tool_usage_rules"] is not None
        assert parts["tool_usage_rules"].endswith(f"{rules}\n</tool_usage_rules>")
        assert parts["external_memory_summary"] == prompt[prompt.index("<memory_metadata>") :]
        assert parts["directories"] is None
        assert parts["memory_filesystem"] is None
        joined = "\n\n".join(
            [parts["system_prompt"], parts["core_memory"], parts["tool_usage_rules"], parts["external_memory_summary"]]
        )
        assert joined == prompt

    def test_custom_prompt_without_base_tag_uses_text_before_first_section(self) -> None:
        parts = split_sections(compile_prompt(base="  You are terse.  "))
        assert parts["system_prompt"] == "You are terse."

    def test_block_labelled_like_a_section_is_not_a_section(self) -> None:
        block = PromptBlock(label="tool_usage_rules", value="mine", limit=10, description="")
        parts = split_sections(compile_prompt(blocks=[block]))
        assert parts["tool_usage_rules"] is None
        assert parts["core_memory"] is not None
        assert "<tool_usage_rules>" in parts["core_memory"]

    def test_react_prompt_has_no_core_memory(self) -> None:
        parts = split_sections(compile_prompt(agent_type="react_agent"))
        assert parts["core_memory"] is None
        assert parts["system_prompt"] == BASE


class TestDefaultPrompts:
    @pytest.mark.parametrize(
        "agent_type",
        ["letta_v1_agent", "memgpt_v2_agent", "memgpt_agent", "sleeptime_agent", "react_agent", "workflow_agent"],
    )
    def test_every_type_has_a_wrapped_prompt_without_placeholder(self, agent_type: str) -> None:
        prompt = default_system_prompt(agent_type)
        assert prompt.startswith("<base_instructions>\n")
        assert prompt.endswith("\n</base_instructions>")
        assert "{" not in prompt

    @pytest.mark.parametrize("agent_type", ["memgpt_agent", "memgpt_v2_agent"])
    def test_memgpt_prompts_explain_send_message_and_heartbeats(self, agent_type: str) -> None:
        prompt = default_system_prompt(agent_type)
        assert "send_message" in prompt
        assert "request_heartbeat" in prompt

    def test_default_prompt_compiles_into_splittable_message(self) -> None:
        prompt = compile_prompt(base=default_system_prompt("letta_v1_agent"))
        assert split_sections(prompt)["system_prompt"] == default_system_prompt("letta_v1_agent")

    def test_unknown_type_is_rejected(self) -> None:
        with pytest.raises(BadRequestError, match="Invalid agent type: robot"):
            default_system_prompt("robot")
