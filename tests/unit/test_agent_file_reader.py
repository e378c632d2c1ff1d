"""The agent-file reader and the legacy → v2 conversion, on the shared files and on hand-made broken ones."""

import json
from typing import Any

import pytest

from memlet.agent_files.legacy import clean_tool_schema, is_legacy
from memlet.agent_files.reader import read_agent_file
from memlet.errors import BadRequestError
from tests.shared_paths import SHARED

AF_DIR = SHARED / "letta" / "agent-files"


def legacy(name: str = "memgpt_agent_with_convo.af") -> dict[str, Any]:
    return json.loads((AF_DIR / name).read_text())  # type: ignore[no-any-return]


def test_legacy_files_convert_with_every_message_and_context_order_kept() -> None:
    data = legacy()
    parsed = read_agent_file(json.dumps(data).encode())
    agent = parsed.agents[0]
    assert len(agent.messages) == 91
    assert agent.in_context_message_ids == [f"message-{i}" for i in data["in_context_message_indices"]]
    assert agent.in_context_message_ids[0] == "message-89"
    assert agent.messages[89].role == "system"
    assert all(m.created_at is not None for m in agent.messages)
    assert parsed.metadata == {"converted_from": data["version"]}
    assert [b.id for b in parsed.blocks] == ["block-0", "block-1"]


def test_double_encoded_json_is_accepted() -> None:
    data = json.dumps(legacy("customer_service.af"))
    assert len(read_agent_file(json.dumps(data).encode()).agents) == 1


def test_legacy_detection() -> None:
    assert is_legacy(legacy())
    assert not is_legacy({"agents": []})


def test_clean_tool_schema_drops_loop_and_sandbox_parameters() -> None:
    schema = {
        "name": "t",
        "type": None,
        "required": [],
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "agent_state": {"type": "any"}, "request_heartbeat": {}},
            "required": ["agent_state", "q", "request_heartbeat"],
        },
    }
    cleaned = clean_tool_schema(schema)
    assert cleaned == {
        "name": "t",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    }


def _broken_legacy(change: str) -> dict[str, Any]:
    data = legacy("customer_service.af")
    if change == "group":
        data["multi_agent_group"] = {"id": "group-1"}
    elif change == "index":
        data["in_context_message_indices"] = [0, 99]
    elif change == "rule":
        data["tool_rules"] = [{"tool_name": "send_message", "type": "warp"}]
    return data


@pytest.mark.parametrize(
    ("change", "named"),
    [("group", "multi_agent_group"), ("index", "in_context_message_indices"), ("rule", "tool_rules")],
)
def test_broken_legacy_files_name_the_field(change: str, named: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        read_agent_file(json.dumps(_broken_legacy(change)).encode())
    assert named in caught.value.message


def test_v2_ids_must_be_unique_and_well_formed() -> None:
    data = json.loads((AF_DIR / "test_basic_agent_with_blocks_tools_messages_v2.af").read_text())
    data["tools"][1]["id"] = data["tools"][0]["id"]
    with pytest.raises(BadRequestError, match="appears more than once"):
        read_agent_file(json.dumps(data).encode())
    data["tools"][1]["id"] = "tool-x"
    with pytest.raises(BadRequestError, match=r"tools\.1\.id"):
        read_agent_file(json.dumps(data).encode())


def test_early_0_6_files_with_text_messages_and_old_rule_names_convert() -> None:
    data = legacy("customer_service.af")
    for message in data["messages"]:
        message["text"] = message.pop("content")[0]["text"]
    data["tool_rules"] = [
        {"tool_name": "send_message", "type": "TerminalToolRule"},
        {"tool_name": "check_order_status", "type": "InitToolRule"},
        {"tool_name": "escalate", "type": "ToolRule", "children": ["send_message"]},
    ]
    agent = read_agent_file(json.dumps(data).encode()).agents[0]
    assert [r.type for r in agent.tool_rules or []] == ["exit_loop", "run_first", "constrain_child_tools"]
    assert agent.messages[0].content == data["messages"][0]["text"]
