"""The sleeptime input (transcript lines and preamble), the turn counter and the main agent's rules, as pure functions."""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from memlet.sleeptime.firing import next_counter
from memlet.sleeptime.transcript import PREAMBLE, message_lines, sleeptime_input, transcript
from memlet.tools.base_tools import includes_base_tool_rules


@dataclass
class Row:
    role: str
    content: list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    name: str | None = None
    approve: bool | None = None
    denial_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class TestMessageLines:
    def test_user_and_assistant_text(self) -> None:
        assert message_lines(Row("user", text("hi there"))) == ["user: hi there"]
        assert message_lines(Row("user", text("hello"), name="ann")) == ["ann: hello"]
        assert message_lines(Row("assistant", text("hello back"))) == ["assistant: hello back"]

    def test_reasoning_and_images(self) -> None:
        row = Row("assistant", [{"type": "reasoning", "reasoning": "hmm"}, {"type": "text", "text": "ok"}])
        assert message_lines(row) == ["assistant: <thinking>hmm</thinking>", "assistant: ok"]
        assert message_lines(Row("user", [{"type": "image", "source": {}}])) == ["user: [Image Here]"]

    def test_tool_calls_show_send_message_text(self) -> None:
        row = Row("assistant", None, [call("send_message", {"message": "hey"}), call("web_search", {"q": "x"})])
        assert message_lines(row) == ["assistant: hey", "assistant: Calling tool web_search"]

    def test_tool_returns(self) -> None:
        packed = json.dumps({"status": "OK", "message": "3 results", "time": "now"})
        assert message_lines(Row("tool", text(packed))) == ["assistant: Tool call returned 3 results"]
        empty = json.dumps({"status": "OK", "message": None, "time": "now"})
        assert message_lines(Row("tool", text(empty))) == []

    def test_system_messages_are_left_out(self) -> None:
        assert message_lines(Row("system", text("You are an agent"))) == []

    def test_approvals(self) -> None:
        assert message_lines(Row("approval", approve=True)) == ["[User approved]"]
        assert message_lines(Row("approval", approve=False, denial_reason="no")) == ["[User rejected: no]"]
        request = Row("approval", None, [call("delete_all", {})])
        assert message_lines(request) == ["assistant: Calling tool delete_all"]


class TestSleeptimeInput:
    rows = (Row("system", text("sys")), Row("user", text("I like tea")), Row("assistant", text("Noted")))

    def test_v3_main_agents_get_the_preamble(self) -> None:
        sent = sleeptime_input("letta_v1_agent", self.rows)
        assert sent.startswith("<system-reminder>")
        assert sent == f"{PREAMBLE}Messages:\nuser: I like tea\nassistant: Noted"
        assert "memory_persona" in PREAMBLE and "NOT" in PREAMBLE

    def test_classic_main_agents_get_the_bare_transcript(self) -> None:
        assert (
            sleeptime_input("memgpt_v2_agent", self.rows)
            == transcript(self.rows)
            == "user: I like tea\nassistant: Noted"
        )


class TestNextCounter:
    def test_frequency_five_fires_on_turns_1_6_11(self) -> None:
        counter: int | None = -1
        fired = []
        for turn in range(1, 12):
            counter, fires = next_counter(counter, 5)
            if fires:
                fired.append(turn)
        assert fired == [1, 6, 11]

    @pytest.mark.parametrize(("frequency", "fires"), [(None, True), (1, True), (0, False)])
    def test_edges(self, frequency: int | None, fires: bool) -> None:
        assert [next_counter(c, frequency)[1] for c in (-1, 0, 3)] == [fires] * 3


def test_sleeptime_enabled_letta_v1_agents_get_base_rules() -> None:
    assert not includes_base_tool_rules("letta_v1_agent", "gpt-4o-mini")
    assert includes_base_tool_rules("letta_v1_agent", "gpt-4o-mini", enable_sleeptime=True)
