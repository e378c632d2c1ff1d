"""The tools and tool rules a new agent gets, as Letta 0.16.8's `create_agent_async` picks them."""

import httpx

from tests.api.test_agents_api import EMBEDDING, MODEL

MULTI_AGENT = {
    "send_message_to_agent_and_wait_for_reply",
    "send_message_to_agents_matching_tags",
    "send_message_to_agent_async",
}


def _create(http: httpx.Client, **fields: object) -> dict[str, object]:
    response = http.post("/v1/agents/", json={"name": "t", "model": MODEL, "embedding": EMBEDDING, **fields})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _tools(agent: dict[str, object]) -> set[str]:
    return {t["name"] for t in agent["tools"]}  # type: ignore[attr-defined]


def _rules(agent: dict[str, object]) -> set[tuple[str, str]]:
    return {(r["tool_name"], r["type"]) for r in agent["tool_rules"]}  # type: ignore[attr-defined]


class TestCreateTools:
    def test_multi_agent_tools_come_without_the_base_tools(self, http: httpx.Client) -> None:
        agent = _create(http, include_base_tools=False, include_multi_agent_tools=True)
        assert _tools(agent) == MULTI_AGENT

    def test_letta_v1_with_base_tools_drops_a_named_send_message(self, http: httpx.Client) -> None:
        agent = _create(http, tools=["send_message", "archival_memory_search"])
        assert _tools(agent) == {"conversation_search", "memory_insert", "memory_replace", "archival_memory_search"}

    def test_letta_v1_without_base_tools_gets_rules_for_the_tools_it_names(self, http: httpx.Client) -> None:
        agent = _create(http, include_base_tools=False, tools=["memory_insert"])
        assert _tools(agent) == {"memory_insert"}
        assert _rules(agent) == {("memory_insert", "continue_loop")}
        # With its base tools, a letta_v1 agent gets no base rules unless it asks.
        assert _rules(_create(http)) == set()
