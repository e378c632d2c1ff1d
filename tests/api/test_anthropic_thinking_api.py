"""Claude agents' thinking, through the official letta-client against the mock's messages API: the `<thinking>`
opening of V2 agents without native thinking, the forced single-tool step's `thinking` argument, and native
thinking blocks stored, signed and sent back (split from test_anthropic_api.py, whose fixtures and helpers it uses).
"""

import json
from dataclasses import replace

import httpx
from letta_client import Letta

from tests.api.test_anthropic_api import chttp, make_agent, say, sse_data
from tests.mock_llm import MockLLM, Reply

__all__ = ["chttp"]  # the fixture, shared with test_anthropic_api.py

PREFILL = {"role": "assistant", "content": "<thinking>"}


class TestThinkingPrefill:
    """A V2 agent whose Claude neither thinks natively nor writes a `thinking` argument is started on `<thinking>`,
    as Letta starts it; the text it goes on with is its reasoning, without the tags."""

    def test_blocking_turn(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude, agent_type="memgpt_v2_agent", reasoning=False)
        assert not agent.llm_config.enable_reasoner and not agent.llm_config.put_inner_thoughts_in_kwargs
        thought = Reply.tool_call("send_message", {"message": "Hi Bob!"}, content="Bob says hello.</thinking>\n")
        mock_llm.script(thought, Reply.tool_call("send_message", {"message": "Bye."}, content="Done.</thinking>"))
        response = say(claude, agent.id, "hello")
        shown = [
            (m.message_type, getattr(m, "reasoning", None) or getattr(m, "content", None)) for m in response.messages
        ]
        assert shown == [("reasoning_message", "Bob says hello.\n"), ("assistant_message", "Hi Bob!")]
        [first] = mock_llm.requests
        assert first["messages"][-1] == PREFILL
        assert first["messages"][-2]["role"] == "user" and "hello" in json.dumps(first["messages"][-2])
        say(claude, agent.id, "bye")
        second = mock_llm.requests[-1]
        assert second["messages"][-1] == PREFILL
        assert "</thinking>" not in json.dumps(second["messages"])

    def test_streamed_reasoning_has_no_tags(self, claude: Letta, chttp: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(claude, agent_type="memgpt_v2_agent", reasoning=False)
        reply = Reply.tool_call("send_message", {"message": "Hi!"}, content="Greet <thinking>him</thinking> back.")
        mock_llm.script(reply)
        body = {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True}
        response = chttp.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        chunks = [c["reasoning"] for c in sse_data(response.text) if c["message_type"] == "reasoning_message"]
        assert "".join(chunks) == "Greet him back." and len(chunks) > 1
        assert mock_llm.requests[-1]["messages"][-1] == PREFILL
        stored = [m.reasoning for m in claude.agents.messages.list(agent.id) if m.message_type == "reasoning_message"]
        assert stored[-1] == "Greet him back."

    def test_not_for_letta_v1_thinking_or_forced_calls(self, claude: Letta, mock_llm: MockLLM) -> None:
        v1 = make_agent(claude, reasoning=False)
        thinking = make_agent(claude, agent_type="memgpt_v2_agent")
        forced = make_agent(
            claude,
            agent_type="memgpt_v2_agent",
            reasoning=False,
            tool_rules=[{"type": "run_first", "tool_name": "send_message"}],
        )
        for agent in (v1, thinking, forced):
            mock_llm.script(
                Reply.tool_call("send_message", {"message": "Ok."}) if agent is not v1 else Reply.text("Ok.")
            )
            say(claude, agent.id, "hi")
            assert mock_llm.requests[-1]["messages"][-1]["role"] == "user"


class TestForcedCallThinking:
    """A V2 agent's step forced to one tool on Claude that does not think natively: as Letta's Claude client does,
    the tool asks for `thinking` as its first argument (no `<thinking>` prefill then), and the history's thoughts
    go back the same way; the argument is shown and stored as the agent's reasoning."""

    def test_the_forced_tool_asks_for_thinking(self, claude: Letta, mock_llm: MockLLM) -> None:
        rules = [{"type": "run_first", "tool_name": "send_message"}]
        agent = make_agent(claude, agent_type="memgpt_v2_agent", reasoning=False, tool_rules=rules)
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet Bob.", "message": "Hi Bob!"}))
        response = say(claude, agent.id, "hello")
        shown = [
            (m.message_type, getattr(m, "reasoning", None) or getattr(m, "content", None)) for m in response.messages
        ]
        assert shown == [("reasoning_message", "Greet Bob."), ("assistant_message", "Hi Bob!")]
        first = mock_llm.requests[-1]
        [tool] = first["tools"]
        assert tool["name"] == "send_message" and first["tool_choice"]["type"] == "tool"
        assert next(iter(tool["input_schema"]["properties"])) == "thinking"
        assert tool["input_schema"]["required"][0] == "thinking"
        assert first["messages"][-1]["role"] == "user"  # no prefill

        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Again.", "message": "Hi again."}))
        say(claude, agent.id, "hello again")
        earlier = [m for m in mock_llm.requests[-1]["messages"] if m["role"] == "assistant"][-1]
        [call] = [b for b in earlier["content"] if b["type"] == "tool_use"]
        assert list(call["input"])[:2] == ["thinking", "message"] and call["input"]["thinking"] == "Greet Bob."

    def test_not_when_more_than_one_tool_may_be_called(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude, agent_type="memgpt_v2_agent", reasoning=False)
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hi."}, content="Bob said hello."))
        say(claude, agent.id, "hello")
        sent = mock_llm.requests[-1]
        assert len(sent["tools"]) > 1 and sent["messages"][-1] == PREFILL
        assert all("thinking" not in t["input_schema"]["properties"] for t in sent["tools"])


class TestThinking:
    def test_signatures_stored_and_sent_back(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        assert agent.llm_config.enable_reasoner
        mock_llm.script(
            Reply.tool_call(
                "memory_insert",
                {"label": "human", "new_string": "Tea."},
                reasoning="Store the tea fact.",
                signature="sig-A",
            ),
            Reply.text("Saved.", reasoning="All done.", signature="sig-B"),
        )
        response = say(claude, agent.id, "remember tea")
        reasoning = [m for m in response.messages if m.message_type == "reasoning_message"]
        assert [(m.reasoning, m.signature) for m in reasoning] == [
            ("Store the tea fact.", "sig-A"),
            ("All done.", "sig-B"),
        ]
        first, second = mock_llm.requests
        assert first["thinking"] == {"type": "enabled", "budget_tokens": agent.llm_config.max_reasoning_tokens}
        assert first["temperature"] == 1.0  # the only value thinking takes, as Letta sends it
        assert first["_beta"] == "interleaved-thinking-2025-05-14"  # thinking between tool calls, as Letta asks
        thought = {"type": "thinking", "thinking": "Store the tea fact.", "signature": "sig-A"}
        assert second["messages"][-2]["content"][0] == thought  # the tool_use turn starts with its signed thinking
        mock_llm.script(Reply.text("Hi again."))
        say(claude, agent.id, "hello")
        history = json.dumps(mock_llm.requests[-1]["messages"])
        assert '"signature": "sig-A"' in history and '"signature": "sig-B"' in history
        # Listed history keeps the signature too.
        listed = [m for m in claude.agents.messages.list(agent.id) if m.message_type == "reasoning_message"]
        assert {m.signature for m in listed} == {"sig-A", "sig-B"}

    def test_another_models_thinking_is_not_sent_back(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        mock_llm.script(Reply(content="Sure.", reasoning="Hmm.", signature="sig-S"), Reply(content="Ok.", redacted="r"))
        say(claude, agent.id, "hi")
        say(claude, agent.id, "and?")
        assert '"sig-S"' in json.dumps(mock_llm.requests[-1]["messages"])  # the same model gets it back
        config = {**agent.llm_config.model_dump(), "model": "claude-opus-4-1-20250805"}
        claude.agents.update(agent.id, llm_config=config)  # type: ignore[arg-type]
        mock_llm.script(Reply.text("Hello from Opus."))
        say(claude, agent.id, "who are you?")
        sent = mock_llm.requests[-1]
        assert sent["model"] == "claude-opus-4-1-20250805"
        assert [m["content"] for m in sent["messages"] if m["role"] == "assistant"][-2:] == [
            [{"type": "text", "text": "Sure."}],
            [{"type": "text", "text": "Ok."}],
        ]

    def test_thinking_goes_back_while_the_config_names_its_model(self, claude: Letta, mock_llm: MockLLM) -> None:
        """An alias in the config (Anthropic answers under the dated name): the thinking is stored with the
        configured model, as Letta stores it, so it goes back to the same model on the next step."""
        agent = make_agent(claude)
        config = {**agent.llm_config.model_dump(), "model": "claude-sonnet-4-5"}
        claude.agents.update(agent.id, llm_config=config)  # type: ignore[arg-type]
        dated = "claude-sonnet-4-5-20250929"
        mock_llm.script(
            replace(
                Reply.tool_call("conversation_search", {"query": "tea"}, reasoning="Look.", signature="sig-L"),
                model=dated,
            ),
            Reply(content="Nothing on tea.", model=dated),
        )
        say(claude, agent.id, "tea?")
        sent = mock_llm.requests[-1]
        assert sent["model"] == "claude-sonnet-4-5"
        [call] = [m for m in sent["messages"] if m["role"] == "assistant"]
        assert call["content"][0] == {"type": "thinking", "thinking": "Look.", "signature": "sig-L"}

    def test_redacted_thinking_round_trip(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        mock_llm.script(Reply(content="Sure.", redacted="opaque-bytes"), Reply.text("ok"))
        response = say(claude, agent.id, "hi")
        hidden = [m for m in response.messages if m.message_type == "hidden_reasoning_message"]
        assert [(m.state, m.hidden_reasoning) for m in hidden] == [("redacted", "opaque-bytes")]
        say(claude, agent.id, "again")
        assert {"type": "redacted_thinking", "data": "opaque-bytes"} in mock_llm.requests[-1]["messages"][-2]["content"]
