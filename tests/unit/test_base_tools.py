"""Letta's built-in tool catalogue, the tools each agent type gets, and the default tool rules."""

import pytest

from memlet.tools.base_tools import (
    BASE_TOOLS,
    FILE_TOOL_NAMES,
    base_tool_names_for,
    default_tool_rules_for,
    includes_base_tool_rules,
)
from memlet.tools.rules import ContinueToolRule, TerminalToolRule, parse_tool_rules

# name -> (tool_type, parameter names in order, required) from SPEC 4.2 and Letta's function sets.
EXPECTED = {
    "send_message": ("letta_core", ["message"], ["message"]),
    "conversation_search": ("letta_core", ["query", "roles", "limit", "start_date", "end_date"], []),
    "archival_memory_insert": ("letta_core", ["content", "tags"], ["content"]),
    "archival_memory_search": (
        "letta_core",
        ["query", "tags", "tag_match_mode", "top_k", "start_datetime", "end_datetime"],
        ["query"],
    ),
    "core_memory_append": ("letta_memory_core", ["label", "content"], ["label", "content"]),
    "core_memory_replace": (
        "letta_memory_core",
        ["label", "old_content", "new_content"],
        ["label", "old_content", "new_content"],
    ),
    "memory": (
        "letta_memory_core",
        [
            "command",
            "path",
            "file_text",
            "description",
            "old_string",
            "new_string",
            "insert_line",
            "insert_text",
            "old_path",
            "new_path",
        ],
        ["command"],
    ),
    "memory_apply_patch": ("letta_memory_core", ["label", "patch"], ["label", "patch"]),
    "memory_replace": (
        "letta_sleeptime_core",
        ["label", "old_string", "new_string"],
        ["label", "old_string", "new_string"],
    ),
    "memory_insert": ("letta_sleeptime_core", ["label", "new_string", "insert_line"], ["label", "new_string"]),
    "memory_rethink": ("letta_sleeptime_core", ["label", "new_memory"], ["label", "new_memory"]),
    "memory_finish_edits": ("letta_sleeptime_core", [], []),
    "send_message_to_agent_and_wait_for_reply": (
        "letta_multi_agent_core",
        ["message", "other_agent_id"],
        ["message", "other_agent_id"],
    ),
    "send_message_to_agent_async": (
        "letta_multi_agent_core",
        ["message", "other_agent_id"],
        ["message", "other_agent_id"],
    ),
    "send_message_to_agents_matching_tags": (
        "letta_multi_agent_core",
        ["message", "match_all", "match_some"],
        ["message", "match_all", "match_some"],
    ),
    "open_files": ("letta_files_core", ["file_requests", "close_all_others"], ["file_requests"]),
    "grep_files": ("letta_files_core", ["pattern", "include", "context_lines", "offset"], ["pattern"]),
    "semantic_search_files": ("letta_files_core", ["query", "limit"], ["query"]),
    "run_code": ("letta_builtin", ["code", "language"], ["code", "language"]),
    "run_code_with_tools": ("letta_builtin", ["code"], ["code"]),
    "web_search": (
        "letta_builtin",
        [
            "query",
            "num_results",
            "category",
            "include_text",
            "include_domains",
            "exclude_domains",
            "start_published_date",
            "end_published_date",
            "user_location",
        ],
        ["query"],
    ),
    "fetch_webpage": ("letta_builtin", ["url"], ["url"]),
    "search_memory": (
        "letta_voice_sleeptime_core",
        ["convo_keyword_queries", "start_minutes_ago", "end_minutes_ago"],
        [],
    ),
    "store_memories": ("letta_voice_sleeptime_core", ["chunks"], ["chunks"]),
    "rethink_user_memory": ("letta_voice_sleeptime_core", ["new_memory"], ["new_memory"]),
    "finish_rethinking_memory": ("letta_voice_sleeptime_core", [], []),
}

PARALLEL = {
    "conversation_search",
    "archival_memory_search",
    "run_code",
    "web_search",
    "fetch_webpage",
    "grep_files",
    "semantic_search_files",
}


def _without_descriptions(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    return value


class TestCatalogue:
    def test_exactly_the_letta_tool_set(self) -> None:
        assert set(BASE_TOOLS) == set(EXPECTED)

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_type_parameters_and_required(self, name: str) -> None:
        tool_type, params, required = EXPECTED[name]
        spec = BASE_TOOLS[name]
        assert spec.tool_type == tool_type
        assert spec.tags == [tool_type]
        assert spec.json_schema["name"] == name
        assert spec.json_schema["description"] == spec.description
        assert spec.json_schema["parameters"]["type"] == "object"
        assert list(spec.json_schema["parameters"]["properties"]) == params
        assert spec.json_schema["parameters"]["required"] == required

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_every_parameter_has_type_and_description(self, name: str) -> None:
        for prop in BASE_TOOLS[name].json_schema["parameters"]["properties"].values():
            assert prop["type"] in {"string", "integer", "boolean", "array"}
            assert prop["description"].strip()

    def test_parallel_execution_flags(self) -> None:
        assert {name for name, spec in BASE_TOOLS.items() if spec.enable_parallel_execution} == PARALLEL

    def test_enums(self) -> None:
        def prop(tool: str, param: str) -> dict:
            return BASE_TOOLS[tool].json_schema["parameters"]["properties"][param]

        assert prop("conversation_search", "roles")["items"] == {
            "type": "string",
            "enum": ["assistant", "user", "tool"],
        }
        assert prop("archival_memory_search", "tag_match_mode")["enum"] == ["any", "all"]
        assert prop("run_code", "language")["enum"] == ["python", "js", "ts", "r", "java"]
        assert len(prop("web_search", "category")["enum"]) == 9
        assert "research paper" in prop("web_search", "category")["enum"]

    def test_nested_objects(self) -> None:
        items = BASE_TOOLS["open_files"].json_schema["parameters"]["properties"]["file_requests"]["items"]
        assert list(items["properties"]) == ["file_name", "offset", "length"]
        assert items["required"] == ["file_name"]
        chunk = BASE_TOOLS["store_memories"].json_schema["parameters"]["properties"]["chunks"]["items"]
        assert chunk["required"] == ["start_index", "end_index", "context"]

    def test_sample_tools_have_letta_structure(self) -> None:
        """The three tools in samples/agent_state.json, compared without their description text."""
        assert _without_descriptions(BASE_TOOLS["memory_insert"].json_schema) == {
            "name": "memory_insert",
            "parameters": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "new_string": {"type": "string"},
                    "insert_line": {"type": "integer"},
                },
                "required": ["label", "new_string"],
            },
        }
        assert _without_descriptions(BASE_TOOLS["conversation_search"].json_schema)["parameters"] == {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "roles": {"type": "array", "items": {"type": "string", "enum": ["assistant", "user", "tool"]}},
                "limit": {"type": "integer"},
                "start_date": {"type": "string"},
                "end_date": {"type": "string"},
            },
            "required": [],
        }

    def test_tool_fields_match_the_wire_shape(self) -> None:
        fields = BASE_TOOLS["conversation_search"].to_tool_fields()
        assert fields == {
            "tool_type": "letta_core",
            "description": BASE_TOOLS["conversation_search"].description,
            "source_type": "python",
            "name": "conversation_search",
            "tags": ["letta_core"],
            "source_code": None,
            "json_schema": BASE_TOOLS["conversation_search"].json_schema,
            "args_json_schema": None,
            "return_char_limit": 50000,
            "pip_requirements": None,
            "npm_requirements": None,
            "default_requires_approval": None,
            "enable_parallel_execution": True,
            "metadata_": {},
            "project_id": None,
        }

    def test_tool_fields_copy_the_schema(self) -> None:
        fields = BASE_TOOLS["send_message"].to_tool_fields()
        fields["json_schema"]["parameters"]["required"].append("x")
        assert BASE_TOOLS["send_message"].json_schema["parameters"]["required"] == ["message"]


class TestBaseToolNamesFor:
    @pytest.mark.parametrize(
        ("agent_type", "expected"),
        [
            ("letta_v1_agent", ["conversation_search", "memory_insert", "memory_replace"]),
            ("memgpt_v2_agent", ["send_message", "conversation_search", "memory_insert", "memory_replace"]),
            (
                "memgpt_agent",
                [
                    "send_message",
                    "conversation_search",
                    "core_memory_append",
                    "core_memory_replace",
                    "memory",
                    "memory_apply_patch",
                ],
            ),
            ("split_thread_agent", base_tool_names_for("memgpt_agent")),
            ("react_agent", []),
            ("workflow_agent", []),
            ("sleeptime_agent", ["memory_replace", "memory_insert", "memory_rethink", "memory_finish_edits"]),
            ("voice_sleeptime_agent", ["store_memories", "rethink_user_memory", "finish_rethinking_memory"]),
            ("voice_convo_agent", ["send_message", "search_memory"]),
        ],
    )
    def test_per_agent_type(self, agent_type: str, expected: list[str]) -> None:
        assert base_tool_names_for(agent_type) == expected

    @pytest.mark.parametrize("agent_type", ["letta_v1_agent", "memgpt_v2_agent", "memgpt_agent", "react_agent"])
    def test_sleeptime_enabled_chat_agents(self, agent_type: str) -> None:
        expected = ["send_message", "conversation_search", "archival_memory_search"]
        assert base_tool_names_for(agent_type, enable_sleeptime=True) == expected

    def test_sleeptime_flag_does_not_change_the_sleeptime_agent(self) -> None:
        assert base_tool_names_for("sleeptime_agent", enable_sleeptime=True) == base_tool_names_for("sleeptime_agent")

    def test_multi_agent_tools(self) -> None:
        names = base_tool_names_for("letta_v1_agent", include_multi_agent_tools=True)
        assert names[3:] == [
            "send_message_to_agent_and_wait_for_reply",
            "send_message_to_agents_matching_tags",
            "send_message_to_agent_async",
        ]
        prod = base_tool_names_for("letta_v1_agent", include_multi_agent_tools=True, production=True)
        assert "send_message_to_agent_async" not in prod

    def test_every_name_is_in_the_catalogue(self) -> None:
        types = ["letta_v1_agent", "memgpt_v2_agent", "memgpt_agent", "sleeptime_agent", "voice_sleeptime_agent"]
        for agent_type in [*types, "voice_convo_agent"]:
            for name in base_tool_names_for(agent_type, include_multi_agent_tools=True):
                assert name in BASE_TOOLS
        assert all(name in BASE_TOOLS for name in FILE_TOOL_NAMES)


class TestDefaultToolRules:
    def test_memgpt_v2_rules(self) -> None:
        names = base_tool_names_for("memgpt_v2_agent")
        assert default_tool_rules_for("memgpt_v2_agent", names, model="gpt-4o-mini") == [
            {"tool_name": "send_message", "type": "exit_loop", "prompt_template": None},
            {"tool_name": "conversation_search", "type": "continue_loop", "prompt_template": None},
            {"tool_name": "memory_insert", "type": "continue_loop", "prompt_template": None},
            {"tool_name": "memory_replace", "type": "continue_loop", "prompt_template": None},
        ]

    def test_memgpt_rules_cover_every_memory_tool(self) -> None:
        rules = default_tool_rules_for("memgpt_agent", base_tool_names_for("memgpt_agent"))
        assert [r["type"] for r in rules] == ["exit_loop"] + ["continue_loop"] * 5

    def test_rules_parse_as_tool_rule_models(self) -> None:
        rules = parse_tool_rules(default_tool_rules_for("memgpt_v2_agent", base_tool_names_for("memgpt_v2_agent")))
        assert isinstance(rules[0], TerminalToolRule)
        assert all(isinstance(rule, ContinueToolRule) for rule in rules[1:])

    def test_letta_v1_gets_none_by_default(self) -> None:
        assert default_tool_rules_for("letta_v1_agent", base_tool_names_for("letta_v1_agent")) == []

    def test_letta_v1_gets_them_when_asked_or_when_rules_were_sent(self) -> None:
        names = base_tool_names_for("letta_v1_agent")
        asked = default_tool_rules_for("letta_v1_agent", names, include_base_tool_rules=True)
        with_user_rules = default_tool_rules_for("letta_v1_agent", names, has_user_rules=True)
        assert asked == with_user_rules
        assert [r["tool_name"] for r in asked] == names
        assert {r["type"] for r in asked} == {"continue_loop"}

    def test_excluded_models_skip_rules_unless_mini_or_asked(self) -> None:
        names = base_tool_names_for("memgpt_v2_agent")
        assert default_tool_rules_for("memgpt_v2_agent", names, model="gpt-5") == []
        assert default_tool_rules_for("memgpt_v2_agent", names, model="claude-3-5-sonnet-20241022") == []
        assert len(default_tool_rules_for("memgpt_v2_agent", names, model="gpt-5-mini")) == 4
        assert len(default_tool_rules_for("memgpt_v2_agent", names, model="gpt-5", include_base_tool_rules=True)) == 4

    def test_sleeptime_agent_keeps_rules_on_excluded_models(self) -> None:
        names = base_tool_names_for("sleeptime_agent")
        rules = default_tool_rules_for("sleeptime_agent", names, model="gpt-5")
        assert rules[-1] == {"tool_name": "memory_finish_edits", "type": "exit_loop", "prompt_template": None}
        assert [r["type"] for r in rules[:-1]] == ["continue_loop"] * 3

    def test_explicit_false_wins(self) -> None:
        names = base_tool_names_for("sleeptime_agent")
        assert default_tool_rules_for("sleeptime_agent", names, include_base_tool_rules=False) == []
        assert not includes_base_tool_rules("memgpt_v2_agent", "gpt-4o", requested=False)

    def test_other_tools_get_no_rule(self) -> None:
        names = ["web_search", "my_custom_tool", "send_message_to_agent_async", "send_message_to_agents_matching_tags"]
        assert default_tool_rules_for("memgpt_agent", names) == [
            {"tool_name": "send_message_to_agent_async", "type": "exit_loop", "prompt_template": None}
        ]
