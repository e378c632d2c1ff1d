"""Letta's LiveKit voice example (letta-ai/letta-voice, ``main.py`` with letta-client 0.1.151 and
``livekit-plugins-openai`` 1.1.1) against memlet, call for call.

Setup: ``agents.create(agent_type="voice_convo_agent", enable_sleeptime=True, initial_message_sequence=[])`` with
no ``system``, then ``agent.multi_agent_group``'s id and buffer lengths are read, ``groups.modify`` sets a
``VoiceSleeptimeManagerUpdate`` (10 / 6), and the group's other agent (the voice sleeptime agent) gets a new model.
Talk: ``openai.LLM.with_letta(agent_id=...)`` is the ``openai`` client on ``<base>/v1/voice-beta/<agent id>``
streaming ``chat.completions.create(model="letta-fast", messages=<the whole LiveKit chat context>,
stream_options={"include_usage": True}, stream=True)``; it reads ``delta.content``, ``delta.tool_calls`` and the
final ``usage`` chunk.
"""

from typing import Any

import httpx
import pytest
from letta_client import Letta
from openai import OpenAI

from tests.api.test_chat_completions_api import EMBEDDING, MODEL
from tests.mock_llm import MockLLM, Reply
from tests.mock_llm.state import system_text

BLOCKS = [{"value": "Name: ?", "label": "human"}, {"value": "You are a helpful assistant.", "label": "persona"}]


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def create_voice_agent(client: Letta) -> Any:
    """The example's ``agents.create``: no ``system``, so the voice agent's default instructions apply."""
    return client.agents.create(
        name="low_latency_voice_agent_demo",
        agent_type="voice_convo_agent",
        memory_blocks=BLOCKS,  # type: ignore[arg-type]
        model=MODEL,
        embedding=EMBEDDING,
        enable_sleeptime=True,
        initial_message_sequence=[],
    )


def livekit_stream(server: Any, agent_id: str, messages: list[dict[str, Any]]) -> list[Any]:
    """What ``LLM.with_letta(...).chat(chat_ctx=...)`` sends and reads."""
    llm = OpenAI(base_url=f"{server.base_url}/v1/voice-beta/{agent_id}", api_key="x", max_retries=0)
    stream = llm.chat.completions.create(
        model="letta-fast",
        messages=messages,  # type: ignore[arg-type]
        stream_options={"include_usage": True},
        stream=True,
    )
    return list(stream)


class TestSetup:
    def test_a_voice_agent_without_system_is_created_with_voice_instructions(
        self, client: Letta, server: Any, mock_llm: MockLLM
    ) -> None:
        agent = create_voice_agent(client)
        assert agent.agent_type == "voice_convo_agent"
        assert sorted(t.name for t in agent.tools) == ["search_memory", "send_message"]
        assert len(agent.message_ids or []) == 1  # initial_message_sequence=[]: the system message alone
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hi Ada."}))
        livekit_stream(server, agent.id, [{"role": "user", "content": "I'm Ada."}])
        sent = system_text(mock_llm.requests[-1])
        assert "search_memory" in sent and "read aloud" in sent and "Name: ?" in sent

    def test_its_sleeptime_side_is_a_voice_sleeptime_group_the_example_can_tune(
        self, client: Letta, http: httpx.Client
    ) -> None:
        agent = create_voice_agent(client)
        group = agent.multi_agent_group
        assert group is not None and group.manager_type == "voice_sleeptime"
        assert (group.max_message_buffer_length, group.min_message_buffer_length) == (30, 15)
        assert group.description == "Low latency voice chat with async memory management."
        # groups.modify(manager_config=VoiceSleeptimeManagerUpdate(max_message_buffer_length=10, min_...=6))
        config = {"manager_type": "voice_sleeptime", "max_message_buffer_length": 10, "min_message_buffer_length": 6}
        response = http.patch(f"/v1/groups/{group.id}", json={"manager_config": config})
        assert response.status_code == 200, response.text
        modified = response.json()
        assert (modified["max_message_buffer_length"], modified["min_message_buffer_length"]) == (10, 6)
        [helper_id] = [a for a in modified["agent_ids"] if a != agent.id]
        helper = client.agents.retrieve(helper_id, include=["agent.blocks", "agent.tools"])
        assert helper.agent_type == "voice_sleeptime_agent" and helper.name == "low_latency_voice_agent_demo-sleeptime"
        assert sorted(t.name for t in helper.tools) == [
            "finish_rethinking_memory",
            "rethink_user_memory",
            "store_memories",
        ]
        assert sorted(b.label for b in helper.blocks) == ["human", "memory_persona", "persona"]
        assert helper.llm_config.model == "gpt-4.1"  # Letta's fixed config for every voice sleeptime agent
        # client.agents.modify(agent_id=sleeptime_agent_id, model=...) to a model the server serves
        updated = client.agents.update(helper_id, model="openai/gpt-4o")
        assert updated.llm_config.model == "gpt-4o"

    def test_turning_sleeptime_back_on_brings_back_a_voice_sleeptime_group(self, client: Letta) -> None:
        agent = create_voice_agent(client)
        assert agent.multi_agent_group is not None
        [helper_id] = [a for a in agent.multi_agent_group.agent_ids if a != agent.id]
        client.agents.delete(helper_id)  # takes its group with it and turns enable_sleeptime off
        assert client.agents.retrieve(agent.id).multi_agent_group is None
        again = client.agents.update(agent.id, enable_sleeptime=True)
        assert again.multi_agent_group is not None and again.multi_agent_group.manager_type == "voice_sleeptime"

    def test_a_plain_agent_with_sleeptime_keeps_its_sleeptime_group(self, client: Letta) -> None:
        agent = client.agents.create(
            agent_type="letta_v1_agent",
            memory_blocks=BLOCKS,  # type: ignore[arg-type]
            model=MODEL,
            embedding=EMBEDDING,
            enable_sleeptime=True,
        )
        assert agent.multi_agent_group is not None and agent.multi_agent_group.manager_type == "sleeptime"


class TestTalk:
    def test_livekit_stream_reads_text_and_usage_from_the_voice_route(
        self, client: Letta, server: Any, mock_llm: MockLLM
    ) -> None:
        agent = create_voice_agent(client)
        mock_llm.script(Reply.tool_call("send_message", {"message": "Nice to meet you, Ada."}))
        chat_ctx = [
            {"role": "system", "content": ""},  # Agent(instructions=""): the Letta agent holds the instructions
            {"role": "assistant", "content": "Hi, what's your name?"},  # session.say(...)
            {"role": "user", "content": "I'm Ada."},
        ]
        chunks = livekit_stream(server, agent.id, chat_ctx)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Nice to meet you, Ada."
        assert not any(c.choices[0].delta.tool_calls for c in chunks if c.choices)
        assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        assert {c.id for c in chunks} == {chunks[0].id} and chunks[0].id.startswith("chatcmpl-")
        # Only the last user message reaches the model; LiveKit's copy of the history is not replayed.
        sent = [m for m in mock_llm.requests[-1]["messages"] if m["role"] != "system"]
        assert [(m["role"], m["content"]) for m in sent] == [("user", "I'm Ada.")]

    def test_a_send_message_reply_is_spoken_text(self, client: Letta, server: Any, mock_llm: MockLLM) -> None:
        """A voice agent answers through send_message, whose message streams as the spoken text."""
        agent = create_voice_agent(client)
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hello, Ada!"}))
        chunks = livekit_stream(server, agent.id, [{"role": "user", "content": "I'm Ada."}])
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello, Ada!"
        assert not any(c.choices[0].delta.tool_calls for c in chunks if c.choices)
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in mock_llm.requests[-1]["tools"]}
        # Letta runs a voice agent in its memgpt-style loop: thoughts in kwargs, heartbeats on non-terminal tools.
        assert sorted(tools) == ["search_memory", "send_message"]
        assert tools["send_message"]["required"] == ["thinking", "message"]
        assert "request_heartbeat" in tools["search_memory"]["properties"]

    def test_a_long_voice_conversation_keeps_its_history_in_context(
        self, client: Letta, server: Any, mock_llm: MockLLM
    ) -> None:
        """Letta 0.16.8 cut a voice agent's context to its last 15 messages once it passed 60, after every turn,
        with no summary and nothing handed to its sleeptime agent; memlet keeps the history until the context
        window fills and then compacts it with a summary, as for any agent."""
        sequence = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(62)]
        sequence[0]["content"] = "My dog is called Pixel."
        agent = client.agents.create(
            agent_type="voice_convo_agent",
            memory_blocks=BLOCKS,  # type: ignore[arg-type]
            model=MODEL,
            embedding=EMBEDDING,
            enable_sleeptime=True,
            initial_message_sequence=sequence,  # type: ignore[arg-type]
        )
        mock_llm.script(
            Reply.tool_call("send_message", {"message": "Noted."}),
            Reply.tool_call("send_message", {"message": "Pixel."}),
        )
        livekit_stream(server, agent.id, [{"role": "user", "content": "Hello again."}])
        livekit_stream(server, agent.id, [{"role": "user", "content": "What is my dog called?"}])
        sent = mock_llm.requests[-1]["messages"]
        assert any(m["role"] == "user" and "My dog is called Pixel." in str(m["content"]) for m in sent)
        assert len(client.agents.retrieve(agent.id).message_ids or []) > 60
