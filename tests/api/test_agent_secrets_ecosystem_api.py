"""Agent secrets as letta-telegram (github.com/letta-ai/letta-telegram) handles them on the pre-1.0 Python SDK
(letta-client 0.1.x): ``/telegram-notify enable`` reads the agent (``client.agents.retrieve``), turns its
``tool_exec_environment_variables`` into a dict, adds ``TELEGRAM_BOT_TOKEN`` / ``TELEGRAM_CHAT_ID`` and writes the dict
back with ``client.agents.modify``, which replaces every secret. Letta 0.16.8 reads an agent for that SDK with all its
relationships, secrets included (``orm/agent.py`` to_pydantic_async), so the agent's other secrets survive."""

import httpx
from letta_client import Letta

# The headers letta-client 0.1.324 sends on every request.
OLD_SDK = {
    "User-Agent": "letta-client/0.1.324",
    "X-Fern-Language": "Python",
    "X-Fern-SDK-Name": "letta-client",
    "X-Fern-SDK-Version": "0.1.324",
}


def test_enabling_notifications_keeps_the_agents_other_secrets(client: Letta, http: httpx.Client) -> None:
    agent = client.agents.create(
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        secrets={"EXA_API_KEY": "exa-key-1"},
    )
    state = http.get(f"/v1/agents/{agent.id}", headers=OLD_SDK).json()
    env = {var["key"]: var["value"] for var in state["tool_exec_environment_variables"] or []}
    assert env == {"EXA_API_KEY": "exa-key-1"}
    env |= {"TELEGRAM_BOT_TOKEN": "bot-token", "TELEGRAM_CHAT_ID": "515978553"}
    patched = http.patch(f"/v1/agents/{agent.id}", json={"tool_exec_environment_variables": env}, headers=OLD_SDK)
    assert patched.status_code == 200, patched.text

    again = http.get(f"/v1/agents/{agent.id}", headers=OLD_SDK).json()
    assert {(v["key"], v["value"]) for v in again["tool_exec_environment_variables"]} == set(env.items())
    assert again["secrets"] == again["tool_exec_environment_variables"]


def test_other_clients_still_get_secrets_only_when_asked(client: Letta, http: httpx.Client) -> None:
    agent = client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", secrets={"EXA_API_KEY": "exa-key-2"}
    )
    for headers in ({"User-Agent": "curl/8.0"}, {"User-Agent": "letta-client/1.12.1"}):
        assert http.get(f"/v1/agents/{agent.id}", headers=headers).json()["secrets"] == []
    # Nor does the old SDK get them in a listing, or when it names the relationships it wants.
    assert "exa-key-2" not in http.get("/v1/agents/", headers=OLD_SDK).text
    named = http.get(f"/v1/agents/{agent.id}", params={"include_relationships": ["tools"]}, headers=OLD_SDK)
    assert named.json()["secrets"] == []
