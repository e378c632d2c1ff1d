"""What Letta 0.16.8's tests/test_sdk_client.py pins down that a letta-client user sees on memlet: repeated tool
rules are stored once, on create and on PATCH, two rules being the same as Letta compares them."""

from typing import Any

from letta_client import Letta

GPT = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def rule_set(rules: Any) -> list[tuple[Any, ...]]:
    return [
        (r.tool_name, r.type, getattr(r, "max_count_limit", None), tuple(getattr(r, "children", None) or ()))
        for r in rules
    ]


REPEATED = [
    {"type": "continue_loop", "tool_name": "conversation_search"},
    {"type": "continue_loop", "tool_name": "conversation_search", "prompt_template": "ignored"},
    {"type": "max_count_per_step", "tool_name": "memory_insert", "max_count_limit": 2},
    {"type": "max_count_per_step", "tool_name": "memory_insert", "max_count_limit": 2},
    {"type": "max_count_per_step", "tool_name": "memory_insert", "max_count_limit": 3},  # another limit: kept
    {"type": "constrain_child_tools", "tool_name": "memory_insert", "children": ["a", "b"]},
    {"type": "constrain_child_tools", "tool_name": "memory_insert", "children": ["b", "a"]},  # same children
    {"type": "constrain_child_tools", "tool_name": "memory_insert", "children": ["c"]},  # others: kept
]
KEPT = [
    ("conversation_search", "continue_loop", None, ()),
    ("memory_insert", "max_count_per_step", 2, ()),
    ("memory_insert", "max_count_per_step", 3, ()),
    ("memory_insert", "constrain_child_tools", None, ("a", "b")),
    ("memory_insert", "constrain_child_tools", None, ("c",)),
]


class TestToolRuleRepeats:
    """test_agent_tool_rules_deduplication: Letta drops repeats whenever it stores an agent's rules."""

    def test_create_keeps_each_rule_once(self, client: Letta) -> None:
        agent = client.agents.create(
            model=GPT,
            embedding=EMBEDDING,
            tool_rules=REPEATED,
            include_base_tools=False,  # type: ignore[arg-type]
        )
        assert rule_set(client.agents.retrieve(agent.id).tool_rules) == KEPT

    def test_patch_keeps_each_rule_once(self, client: Letta) -> None:
        terminal = [{"type": "exit_loop", "tool_name": "send_message"}] * 3
        agent = client.agents.create(
            model=GPT,
            embedding=EMBEDDING,
            tool_rules=terminal,
            include_base_tools=False,  # type: ignore[arg-type]
        )
        assert rule_set(agent.tool_rules) == [("send_message", "exit_loop", None, ())]
        updated = client.agents.update(agent.id, tool_rules=REPEATED)  # type: ignore[arg-type]
        assert rule_set(updated.tool_rules) == KEPT
        assert rule_set(client.agents.retrieve(agent.id).tool_rules) == KEPT
