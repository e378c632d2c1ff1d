"""The default system prompts describe what the loop does after a failed tool call (issue #11 item 5)."""

from tests.mock_llm import Reply
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env

__all__ = ["loop_env"]

FAILS = CustomTool(
    name="fails",
    source_code='def fails() -> str:\n    """Always fails."""\n    raise ValueError("broken")\n',
    json_schema=function_schema("fails", {}),
)


class TestFailedCalls:
    async def test_v2_failed_call_without_heartbeat_ends_the_turn_as_the_prompt_says(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", custom_tools=[FAILS])
        mock_llm.script(Reply.tool_call("fails", {"thinking": "try", "request_heartbeat": False}))
        out = await loop_env.send(agent, "go")
        assert len(mock_llm.requests) == 1 and out.final.stop_reason == "end_turn"
        prompt = mock_llm.requests[0]["messages"][0]["content"]
        assert "a tool that fails while request_heartbeat is false ends your turn" in prompt
        assert "always gives you another turn" not in prompt

    async def test_v2_failed_call_with_heartbeat_gets_a_turn(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", custom_tools=[FAILS])
        mock_llm.script(
            Reply.tool_call("fails", {"thinking": "try", "request_heartbeat": True}),
            Reply.tool_call("send_message", {"thinking": "t", "message": "It failed."}),
        )
        out = await loop_env.send(agent, "go")
        assert len(mock_llm.requests) == 2 and out.final.stop_reason == "end_turn"

    async def test_v1_failed_call_gets_a_turn_as_the_prompt_says(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[FAILS])
        mock_llm.script(Reply.tool_call("fails", {}), Reply.text("It failed."))
        out = await loop_env.send(agent, "go")
        assert len(mock_llm.requests) == 2 and out.final.stop_reason == "end_turn"
        prompt = " ".join(mock_llm.requests[0]["messages"][0]["content"].split())
        assert "Each tool call gives you another turn, even when it fails." in prompt
