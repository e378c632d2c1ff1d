"""Tool rules and approvals through the agent loop (real Postgres, mock LLM).

Every rule test checks what the model was OFFERED at each step (the tools and tool_choice in the recorded
requests) as well as what happened.
"""

import json
from typing import Any

from memlet.loop.response import previous_message_id
from memlet.messages.requests import ApprovalCreate
from memlet.messages.schemas import ApprovalReturn
from tests.mock_llm import Call, Reply
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env
from tests.service.loop_rules_support import PARALLEL, blocks_of, noop, tool_texts

__all__ = ["loop_env"]


ECHO = CustomTool(
    name="echo",
    source_code='def echo(x: str) -> str:\n    """Echo.\n\n    Args:\n        x: text\n    """\n    return x\n',
    json_schema=function_schema("echo", {"x": {"type": "string"}}, ["x"]),
)


def offered(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def forced(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


CONDITIONAL_TOOLS = [ECHO, noop("tool_a"), noop("tool_b"), noop("tool_c")]


def conditional(**fields: Any) -> list[dict[str, Any]]:
    rule = {"tool_name": "echo", "type": "conditional", "child_output_mapping": {"yes": "tool_a", "no": "tool_b"}}
    return [{**rule, **fields}]


class TestConditional:
    async def test_output_mapping_picks_the_only_child_and_forces_it(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tools=[], custom_tools=CONDITIONAL_TOOLS, tool_rules=conditional())
        mock_llm.script(Reply.tool_call("echo", {"x": "no"}), Reply.tool_call("tool_b", {}), Reply.text("done"))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        first, second, third = mock_llm.requests
        assert (offered(first), first["tool_choice"]) == (["echo", "tool_a", "tool_b", "tool_c"], "auto")
        assert (offered(second), second["tool_choice"]) == (["tool_b"], forced("tool_b"))
        assert (offered(third), third["tool_choice"]) == (["echo", "tool_a", "tool_b", "tool_c"], "auto")
        assert [t["message"] for t in tool_texts(await loop_env.in_context(agent.id))] == ["no", "tool_b done"]

    async def test_unmatched_output_uses_default_child(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = conditional(default_child="tool_c")
        agent = await loop_env.agent(tools=[], custom_tools=CONDITIONAL_TOOLS, tool_rules=rules)
        mock_llm.script(Reply.tool_call("echo", {"x": "maybe"}), Reply.tool_call("tool_c", {}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        assert offered(mock_llm.requests[1]) == ["tool_c"]
        assert mock_llm.requests[1]["tool_choice"] == forced("tool_c")

    async def test_unmatched_without_default_allows_all_but_still_forces(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tools=[], custom_tools=CONDITIONAL_TOOLS, tool_rules=conditional())
        mock_llm.script(Reply.tool_call("echo", {"x": "maybe"}), Reply.tool_call("tool_c", {}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        assert offered(mock_llm.requests[1]) == ["echo", "tool_a", "tool_b", "tool_c"]
        assert mock_llm.requests[1]["tool_choice"] == "required"

    async def test_require_output_mapping_leaves_nothing_so_letta_falls_back_to_all(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        rules = conditional(default_child="tool_c", require_output_mapping=True)
        agent = await loop_env.agent(tools=[], custom_tools=CONDITIONAL_TOOLS, tool_rules=rules)
        mock_llm.script(Reply.tool_call("echo", {"x": "maybe"}), Reply.tool_call("tool_a", {}), Reply.text("ok"))
        out = await loop_env.send(agent, "go")
        # The rule permits no tool; Letta's loop then offers every tool (and still forces a call).
        assert offered(mock_llm.requests[1]) == ["echo", "tool_a", "tool_b", "tool_c"]
        assert mock_llm.requests[1]["tool_choice"] == "required"
        assert out.final.stop_reason == "end_turn"


class TestParentLastTool:
    async def test_children_only_right_after_the_parent(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "tool_a", "type": "parent_last_tool", "children": ["tool_b"]}]
        agent = await loop_env.agent(tools=[], custom_tools=[noop("tool_a"), noop("tool_b")], tool_rules=rules)
        mock_llm.script(
            Reply.tool_call("tool_b", {}),  # refused: its parent was not the last call
            Reply.tool_call("tool_a", {}),
            Reply.tool_call("tool_b", {}),
            Reply.text("done"),
        )
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        requests = mock_llm.requests
        assert [offered(r) for r in requests] == [["tool_a"], ["tool_a"], ["tool_b"], ["tool_a"]]
        assert [r["tool_choice"] for r in requests] == ["auto", "auto", forced("tool_b"), "auto"]
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["message"].startswith("[ToolConstraintError] Cannot call tool_b, valid tools include:")
        assert [r["message"] for r in returns[1:]] == ["tool_a done", "tool_b done"]


class TestContinueLoop:
    async def test_v2_continue_rule_injects_heartbeat_without_request(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [
            {"tool_name": "send_message", "type": "exit_loop"},
            {"tool_name": "conversation_search", "type": "continue_loop"},
        ]
        agent = await loop_env.agent(
            agent_type="memgpt_v2_agent", tools=["send_message", "conversation_search"], tool_rules=rules
        )
        mock_llm.script(
            Reply.tool_call("conversation_search", {"thinking": "t", "query": "x", "request_heartbeat": False}),
            Reply.tool_call("send_message", {"thinking": "t", "message": "nothing found"}),
        )
        out = await loop_env.send(agent, "find x")
        assert out.final.stop_reason == "end_turn"
        assert [m.role for m in out.messages] == ["assistant", "tool", "user", "assistant", "tool"]
        heartbeat = json.loads(out.messages[2].content[0].text)
        assert heartbeat["reason"] == (
            "[This is an automated system message hidden from the user] Continuing: continue tool rule."
        )
        stored = json.loads(out.messages[0].tool_calls[0].function.arguments)
        assert stored["request_heartbeat"] is True  # forced to the computed continuation

    async def test_v2_failed_call_without_heartbeat_ends_the_turn(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "send_message", "type": "exit_loop"}]
        agent = await loop_env.agent(
            agent_type="memgpt_v2_agent", tools=["send_message", "memory_replace"], tool_rules=rules
        )
        args = {"thinking": "t", "label": "human", "old_string": "nope", "new_string": "x", "request_heartbeat": False}
        mock_llm.script(Reply.tool_call("memory_replace", args))
        out = await loop_env.send(agent, "edit")
        assert out.final.stop_reason == "end_turn"
        assert len(mock_llm.requests) == 1
        assert [m.role for m in out.messages] == ["assistant", "tool"]

    async def test_v2_heartbeat_given_as_text_counts_only_when_it_says_true(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "send_message", "type": "exit_loop"}]
        agent = await loop_env.agent(
            agent_type="memgpt_v2_agent", tools=["send_message", "conversation_search"], tool_rules=rules
        )
        for flag, requests in (("false", 1), ("True", 2)):
            mock_llm.reset()
            args = {"thinking": "t", "query": "x", "request_heartbeat": flag}
            mock_llm.script(
                Reply.tool_call("conversation_search", args),
                Reply.tool_call("send_message", {"thinking": "t", "message": "ok"}),
            )
            out = await loop_env.send(agent, "look")
            assert len(mock_llm.requests) == requests, flag
            stored = json.loads(out.messages[0].tool_calls[0].function.arguments)
            assert stored["request_heartbeat"] is (flag == "True")

    async def test_v2_failed_call_with_heartbeat_reports_failure(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "send_message", "type": "exit_loop"}]
        agent = await loop_env.agent(
            agent_type="memgpt_v2_agent", tools=["send_message", "memory_replace"], tool_rules=rules
        )
        args = {"thinking": "t", "label": "human", "old_string": "nope", "new_string": "x", "request_heartbeat": True}
        mock_llm.script(
            Reply.tool_call("memory_replace", args), Reply.tool_call("send_message", {"thinking": "t", "message": "k"})
        )
        out = await loop_env.send(agent, "edit")
        heartbeat = json.loads(out.messages[2].content[0].text)
        assert heartbeat["reason"].endswith("Function call failed, returning control")

    async def test_v3_continue_rule_keeps_going_without_heartbeat_rows(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "tool_a", "type": "continue_loop"}]
        agent = await loop_env.agent(tools=[], custom_tools=[noop("tool_a")], tool_rules=rules)
        mock_llm.script(Reply.tool_call("tool_a", {}), Reply.text("done"))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        assert [m.role for m in out.messages] == ["assistant", "tool", "assistant"]
        assert len(mock_llm.requests) == 2


class TestV3Exits:
    async def test_a_refused_exit_tool_does_not_end_the_turn(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "tool_a", "type": "run_first"}, {"tool_name": "tool_b", "type": "exit_loop"}]
        agent = await loop_env.agent(tools=[], custom_tools=[noop("tool_a"), noop("tool_b")], tool_rules=rules)
        mock_llm.script(Reply.tool_call("tool_b", {}), Reply.tool_call("tool_a", {}), Reply.tool_call("tool_b", {}))
        out = await loop_env.send(agent, "go")
        assert len(mock_llm.requests) == 3  # the refused tool_b did not stop the loop; the one that ran did
        assert out.final.stop_reason == "tool_rule"
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert [r["status"] for r in returns] == ["Failed", "OK", "OK"]

    async def test_an_exit_before_a_required_tool_goes_on_without_a_heartbeat(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        rules = [
            {"tool_name": "tool_a", "type": "required_before_exit"},
            {"tool_name": "tool_b", "type": "exit_loop"},
        ]
        agent = await loop_env.agent(tools=[], custom_tools=[noop("tool_a"), noop("tool_b")], tool_rules=rules)
        mock_llm.script(Reply.tool_call("tool_b", {}), Reply.tool_call("tool_a", {}), Reply.tool_call("tool_b", {}))
        out = await loop_env.send(agent, "go")
        assert len(mock_llm.requests) == 3 and out.final.stop_reason == "tool_rule"
        assert [m.role for m in out.messages] == ["assistant", "tool"] * 3  # no heartbeat user row


class TestChildRules:
    async def test_child_arg_nodes_prefill_override_the_models_args(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [
            {
                "tool_name": "conversation_search",
                "type": "constrain_child_tools",
                "children": ["memory_insert"],
                "child_arg_nodes": [{"name": "memory_insert", "args": {"label": "human"}}],
            }
        ]
        agent = await loop_env.agent(tool_rules=rules)
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea"}),
            Reply.tool_call("memory_insert", {"label": "persona", "new_string": "Likes tea."}),
            Reply.text("noted"),
        )
        await loop_env.send(agent, "I like tea")
        assert offered(mock_llm.requests[1]) == ["memory_insert"]
        assert mock_llm.requests[1]["tool_choice"] == forced("memory_insert")
        blocks = await blocks_of(loop_env, agent.id)
        assert blocks == {"persona": "I am a helpful agent.", "human": "Name: Sam\nLikes tea."}
        # The stored prompt has the edit; the turn goes on with the one it started with (as Letta's does).
        assert mock_llm.requests[2]["messages"][0] == mock_llm.requests[0]["messages"][0]

    async def test_several_children_force_required(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [
            {"tool_name": "tool_a", "type": "constrain_child_tools", "children": ["tool_b", "tool_c"]},
            {"tool_name": "tool_a", "type": "run_first"},
        ]
        tools = [noop("tool_a"), noop("tool_b"), noop("tool_c")]
        agent = await loop_env.agent(tools=[], custom_tools=tools, tool_rules=rules)
        mock_llm.script(Reply.tool_call("tool_a", {}), Reply.tool_call("tool_c", {}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        requests = mock_llm.requests
        assert [(offered(r), r["tool_choice"]) for r in requests] == [
            (["tool_a"], forced("tool_a")),
            (["tool_b", "tool_c"], "required"),
            (["tool_a", "tool_b", "tool_c"], "auto"),
        ]

    async def test_refused_call_does_not_lift_the_constraint(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "tool_a", "type": "constrain_child_tools", "children": ["tool_b"]}]
        tools = [noop("tool_a"), noop("tool_b"), noop("tool_c")]
        agent = await loop_env.agent(tools=[], custom_tools=tools, tool_rules=rules)
        mock_llm.script(
            Reply.tool_call("tool_a", {}),
            Reply.tool_call("tool_c", {}),  # refused
            Reply.tool_call("tool_b", {}),
            Reply.text("ok"),
        )
        await loop_env.send(agent, "go")
        # After the refusal the last *executed* call is still tool_a, so the model is still held to tool_b.
        everything = ["tool_a", "tool_b", "tool_c"]
        assert [offered(r) for r in mock_llm.requests] == [everything, ["tool_b"], ["tool_b"], everything]
        assert mock_llm.requests[2]["tool_choice"] == forced("tool_b")
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert [r["status"] for r in returns] == ["OK", "Failed", "OK"]


class TestApprovalRules:
    async def test_requires_approval_rule_holds_the_call_until_approved(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tool_rules=[{"tool_name": "memory_insert", "type": "requires_approval"}])
        mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}, id="call_m"))
        first = await loop_env.send(agent, "remember tea")
        assert first.final.stop_reason == "requires_approval"
        assert [m.role for m in first.messages] == ["approval"]
        assert first.messages[0].otid == first.messages[0].id
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam"
        mock_llm.script(Reply.text("saved"))
        approve = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_m", approve=True)])
        second = await loop_env.send(agent, approve)
        assert second.final.stop_reason == "end_turn"
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam\nLikes tea."
        # The approved edit ran in this turn, which keeps the prompt it started with; the next turn shows it.
        assert "Likes tea." not in mock_llm.requests[-1]["messages"][0]["content"]
        mock_llm.script(Reply.text("ok"))
        await loop_env.send(agent, "thanks")
        assert "Likes tea." in mock_llm.requests[-1]["messages"][0]["content"]

    async def test_a_denied_call_does_not_count_as_called(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "check", "type": "required_before_exit"}]
        agent = await loop_env.agent(custom_tools=[noop("check", requires_approval=True)], tool_rules=rules)
        mock_llm.script(Reply.tool_call("check", {}, id="call_c"))
        await loop_env.send(agent, "go")
        mock_llm.script(Reply.text("fine"), Reply.tool_call("check", {}, id="call_c2"))
        deny = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_c", approve=False, reason="not now")])
        out = await loop_env.send(agent, deny)
        # The denial ran nothing, so the model's text reply may not end the turn: check is still owed.
        assert len(mock_llm.requests) == 3
        assert "check" in str(mock_llm.requests[2]["messages"][-1]["content"])
        assert out.final.stop_reason == "requires_approval"

    async def test_mixed_response_holds_ungated_calls_and_runs_them_after_approval(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        agent = await loop_env.agent(llm=PARALLEL, custom_tools=[noop("launch", requires_approval=True)])
        mock_llm.script(
            Reply.tool_calls(
                Call("memory_insert", {"label": "human", "new_string": "Launching."}, id="call_u"),
                Call("launch", {}, id="call_g"),
                content="Let me do both.",
            )
        )
        first = await loop_env.send(agent, "launch it")
        assert first.final.stop_reason == "requires_approval"
        assistant, request = first.messages
        assert (assistant.role, request.role) == ("assistant", "approval")
        assert [c.id for c in assistant.tool_calls] == ["call_u"]
        assert assistant.content[0].text == "Let me do both."
        assert [c.id for c in request.tool_calls] == ["call_g"]
        assert request.id == previous_message_id(assistant.id) and request.otid == request.id
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam"  # nothing ran yet
        mock_llm.script(Reply.text("done"))
        approve = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_g", approve=True)])
        second = await loop_env.send(agent, approve)
        assert second.final.stop_reason == "end_turn"
        # One tool row holds both returns, in call order (the approval answer is stored, not returned).
        assert [m.role for m in second.messages] == ["tool", "assistant"]
        assert [r.tool_call_id for r in second.messages[0].tool_returns] == ["call_g", "call_u"]
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam\nLaunching."
        # The model sees its response as one message with both calls, then both returns.
        wire = mock_llm.requests[-1]["messages"]
        calls = [m for m in wire if m.get("tool_calls")]
        assert len(calls) == 1 and [c["id"] for c in calls[0]["tool_calls"]] == ["call_u", "call_g"]
        assert [m["tool_call_id"] for m in wire if m["role"] == "tool"] == ["call_g", "call_u"]
