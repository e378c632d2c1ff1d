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
        mock_llm.script(Reply.text("Hi Ada."))
        livekit_stream(server, agent.id, [{"role": "user", "content": "I'm Ada."}])
        sent = system_text(mock_llm.requests[-1])
        assert "search_memory" in sent and "read aloud" in sent and "Name: ?" in sent
