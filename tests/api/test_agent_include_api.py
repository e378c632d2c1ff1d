"""Which relationships an agent response carries: `include=` and the legacy `include_relationships`, as Letta 0.16.8's
serializer maps them (`orm/agent.py` to_pydantic_async; its query's narrower answer to `include=` alone is a README
compatibility note)."""

from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_agents_api import EMBEDDING, MODEL

CURL = {"user-agent": "curl/8.0"}


def _agent(http: httpx.Client) -> str:
    identity = http.post("/v1/identities/", json={"identifier_key": "ann", "name": "Ann", "identity_type": "user"})
    body = {
        "name": "inc",
        "model": MODEL,
        "embedding": EMBEDDING,
        "memory_blocks": [{"label": "human", "value": "Ann"}],
        "tags": ["t"],
        "secrets": {"K": "v"},
        "identity_ids": [identity.json()["id"]],
    }
    created = http.post("/v1/agents/", json=body)
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


def _shown(body: dict[str, Any]) -> set[str]:
    """The relationships a response filled."""
    fields = ("blocks", "tools", "tags", "identity_ids", "identities", "secrets", "tool_exec_environment_variables")
    return {f for f in fields if body[f]}


class TestLegacyIncludeRelationships:
    def test_each_legacy_name_loads_what_letta_loads(self, http: httpx.Client) -> None:
        agent_id = _agent(http)

        def shown(*names: str) -> set[str]:
            params = {"include_relationships": list(names)}
            return _shown(http.get(f"/v1/agents/{agent_id}", params=params, headers=CURL).json())

        assert shown("memory") == {"blocks", "tags"}
        assert shown("identity_ids") == {"identity_ids", "identities"}
        assert shown("tool_exec_environment_variables") == {"secrets", "tool_exec_environment_variables"}
        assert shown("secrets") == {"secrets", "tool_exec_environment_variables"}
        assert shown("tools", "tags") == {"tools", "tags"}
        # Names Letta does not map load nothing, `agent.*` ones included.
        assert shown("blocks", "agent.tags", "identities") == set()

    def test_include_adds_to_the_legacy_names(self, http: httpx.Client) -> None:
        agent_id = _agent(http)
        params = {"include_relationships": ["tools"], "include": ["agent.identities"]}
        body = http.get(f"/v1/agents/{agent_id}", params=params, headers=CURL).json()
        assert _shown(body) == {"tools", "identity_ids", "identities"}
        # Without the legacy parameter a pre-1.0 client gets every relationship, whatever it includes.
        everything = http.get(f"/v1/agents/{agent_id}", params={"include": ["agent.tags"]}, headers=CURL).json()
        assert {"blocks", "tools", "tags", "identity_ids"} <= _shown(everything)


class TestInclude:
    def test_blocks_bring_the_tags_and_identity_ids_need_identities(self, client: Letta, http: httpx.Client) -> None:
        agent_id = _agent(http)
        plain = client.agents.retrieve(agent_id)
        assert plain.identity_ids == [] and plain.tags == []
        with_blocks = client.agents.retrieve(agent_id, include=["agent.blocks"])
        assert with_blocks.tags == ["t"] and with_blocks.identity_ids == []
        listed = client.agents.list(include=["agent.blocks"]).items
        assert [a.tags for a in listed] == [["t"]] and [a.identity_ids for a in listed] == [[]]
        with_identities = client.agents.retrieve(agent_id, include=["agent.identities"])
        assert len(with_identities.identity_ids or []) == 1 and with_identities.tags == []
