"""The messages a new agent starts with, by agent type, as Letta 0.16.8's create writes them
(`initialize_message_sequence_async`, `package_initial_message_sequence`)."""

import json
import re
from typing import Any

import httpx
import pytest

from memlet.agents.initial_messages import BOOT_GREETING, GPT35_BOOT_GREETING, GPT35_BOOT_THOUGHT
from tests.api.test_agents_api import EMBEDDING, MODEL
from tests.mock_llm import MockLLM, Reply


def _create(http: httpx.Client, agent_type: str, **fields: object) -> dict[str, object]:
    body = {"name": agent_type, "model": MODEL, "embedding": EMBEDDING, "agent_type": agent_type, **fields}
    response = http.post("/v1/agents/", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _listed(http: httpx.Client, agent: dict[str, object]) -> list[str]:
    """The message types of the agent's history, oldest first."""
    listed = http.get(f"/v1/agents/{agent['id']}/messages", params={"limit": 50, "order": "asc"}).json()
    return [m["message_type"] for m in listed]


class TestByAgentType:
    @pytest.mark.parametrize("agent_type", ["memgpt_agent", "memgpt_v2_agent", "react_agent", "workflow_agent"])
    def test_boot_exchange_for_every_type_but_letta_v1(self, http: httpx.Client, agent_type: str) -> None:
        agent = _create(http, agent_type)
        assert len(agent["message_ids"]) == 4  # type: ignore[arg-type]
        # The send_message call is listed as the assistant's reply, its return hidden.
        assert _listed(http, agent) == ["system_message", "reasoning_message", "assistant_message", "user_message"]

    def test_letta_v1_starts_with_its_system_message_alone(self, http: httpx.Client) -> None:
        assert len(_create(http, "letta_v1_agent", include_base_tools=False)["message_ids"]) == 1  # type: ignore[arg-type]

    @pytest.mark.parametrize("agent_type", ["sleeptime_agent", "voice_sleeptime_agent"])
    def test_sleeptime_types_with_base_tools_start_bare(self, http: httpx.Client, agent_type: str) -> None:
        assert len(_create(http, agent_type, system="You watch.")["message_ids"]) == 1  # type: ignore[arg-type]

    def test_sleeptime_agent_without_base_tools_gets_the_login(self, http: httpx.Client) -> None:
        agent = _create(http, "sleeptime_agent", include_base_tools=False)
        assert len(agent["message_ids"]) == 2  # type: ignore[arg-type]
        assert _listed(http, agent) == ["system_message", "user_message"]

    def test_voice_sleeptime_agent_without_base_tools_boots(self, http: httpx.Client) -> None:
        agent = _create(http, "voice_sleeptime_agent", system="You watch.", include_base_tools=False)
        assert len(agent["message_ids"]) == 4  # type: ignore[arg-type]

    def test_workflow_agent_always_autoclears(self, http: httpx.Client) -> None:
        assert _create(http, "workflow_agent", message_buffer_autoclear=False)["message_buffer_autoclear"] is True


class TestInitialMessageSequence:
    def test_entries_are_stored_as_letta_packs_them(self, http: httpx.Client) -> None:
        sequence = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello there"},
            {"role": "system", "content": "note"},
        ]
        agent = _create(http, "memgpt_v2_agent", initial_message_sequence=sequence)
        assert len(agent["message_ids"]) == 5  # type: ignore[arg-type]  # system, user, call + return, system
        url = f"/v1/agents/{agent['id']}/messages"
        listed = http.get(url, params={"order": "asc"}).json()
        assert [m["message_type"] for m in listed] == [
            "system_message",
            "user_message",
            "assistant_message",
            "system_message",
        ]
        assert listed[2]["content"] == "hello there"
        alert = json.loads(listed[3]["content"])
        assert alert["type"] == "system_alert" and alert["message"] == "note"
        raw = http.get(url, params={"order": "asc", "use_assistant_message": "false"}).json()
        call, returned = raw[2], raw[3]
        assert call["message_type"] == "tool_call_message" and call["tool_call"]["name"] == "send_message"
        assert json.loads(call["tool_call"]["arguments"]) == {"message": "hello there"}
        assert returned["message_type"] == "tool_return_message" and returned["status"] == "success"
        assert returned["tool_return"] == "None"


class TestBootVariants:
    """Letta's boot exchange depends on the model: what the model is sent on the agent's first turn."""

    @staticmethod
    def first_request(http: httpx.Client, mock_llm: MockLLM, agent_type: str, **config: object) -> list[Any]:
        llm_config = {"model_endpoint_type": "openai", "model_endpoint": mock_llm.base_url, "context_window": 16000}
        body = {"agent_type": agent_type, "llm_config": {**llm_config, **config}, "embedding": EMBEDDING}
        created = http.post("/v1/agents/", json=body)
        assert created.status_code == 200, created.text
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("send_message", {"message": "hi", "thinking": "ok"}))
        turn = http.post(f"/v1/agents/{created.json()['id']}/messages", json={"input": "hello"})
        assert turn.status_code == 200, turn.text
        return list(mock_llm.requests[0]["messages"])

    @staticmethod
    def greeting(messages: list[Any]) -> dict[str, Any]:
        (call,) = next(m for m in messages if m["role"] == "assistant")["tool_calls"]
        return dict(json.loads(call["function"]["arguments"]))

    def test_a_gpt35_agent_opens_with_the_short_greeting(self, http: httpx.Client, mock_llm: MockLLM) -> None:
        kwargs = self.first_request(http, mock_llm, "memgpt_v2_agent", model="gpt-3.5-turbo")
        assert self.greeting(kwargs) == {"thinking": GPT35_BOOT_THOUGHT, "message": GPT35_BOOT_GREETING}
        other = self.first_request(http, mock_llm, "memgpt_v2_agent", model="gpt-4o-mini")
        assert self.greeting(other)["message"] == BOOT_GREETING

    def test_the_boot_calls_arguments_are_written_over_lines(self, http: httpx.Client) -> None:
        agent = _create(http, "memgpt_v2_agent")
        params = {"limit": 10, "order": "asc", "use_assistant_message": False}
        listed = http.get(f"/v1/agents/{agent['id']}/messages", params=params).json()
        (call,) = [m["tool_call"] for m in listed if m["message_type"] == "tool_call_message"]
        assert call["arguments"] == '{\n  "message": "' + BOOT_GREETING + '"\n}'  # as Letta writes them

    @pytest.mark.parametrize("agent_type", ["memgpt_agent", "memgpt_v2_agent"])
    def test_an_lm_studio_agent_gets_the_login_first_and_a_short_call_id(
        self, http: httpx.Client, mock_llm: MockLLM, agent_type: str
    ) -> None:
        sent = self.first_request(http, mock_llm, agent_type, model="qwen3-8b", provider_name="lmstudio_openai")
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
        assert json.loads(sent[1]["content"])["type"] == "login"
        call_id = sent[2]["tool_calls"][0]["id"]
        assert re.fullmatch(r"[0-9a-f]{9}", call_id) and sent[3]["tool_call_id"] == call_id
        elsewhere = self.first_request(http, mock_llm, agent_type, model="qwen3-8b", provider_name="vllm")
        assert [m["role"] for m in elsewhere] == ["system", "assistant", "tool", "user", "user"]
        assert len(elsewhere[1]["tool_calls"][0]["id"]) > 9
