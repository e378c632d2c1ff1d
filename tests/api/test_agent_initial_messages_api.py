"""The messages a new agent starts with, by agent type, as Letta 0.16.8's create writes them
(`initialize_message_sequence_async`, `package_initial_message_sequence`)."""

import json

import httpx
import pytest

from tests.api.test_agents_api import EMBEDDING, MODEL


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
