"""/v1/agents/{agent_id}/tools: list, attach, detach and approval, through letta-client 1.x and an older client."""

import httpx
import pytest
from letta_client import Letta, NotFoundError

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
# Letta answers older clients (not letta-client 1.x) with the updated AgentState.
LEGACY_CLIENT = {"User-Agent": "python-requests/2.31"}


def source(name: str) -> str:
    return f'def {name}(x: int) -> int:\n    """Echo.\n\n    Args:\n        x: A number.\n    """\n    return x\n'


def make_agent(client: Letta):  # type: ignore[no-untyped-def]
    return client.agents.create(model=MODEL, embedding=EMBEDDING)


def tool_names(client: Letta, agent_id: str) -> set[str]:
    return {t.name or "" for t in client.agents.tools.list(agent_id, limit=100)}


def approval_rules(client: Letta, agent_id: str) -> list[str]:
    rules = client.agents.retrieve(agent_id).tool_rules or []
    return [r.tool_name for r in rules if r.type == "requires_approval"]


class TestListAgentTools:
    def test_lists_default_tools_and_pages(self, client: Letta) -> None:
        agent = make_agent(client)
        assert tool_names(client, agent.id) == {"conversation_search", "memory_insert", "memory_replace"}
        first = client.agents.tools.list(agent.id, limit=2, order="asc")
        assert len(first.items) == 2
        walked = [t.id for t in client.agents.tools.list(agent.id, limit=2, order="asc")]
        assert len(walked) == len(set(walked)) == 3

    def test_unknown_agent_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.agents.tools.list("agent-00000000-0000-4000-8000-000000000001")


class TestAttachDetach:
    def test_attach_then_detach(self, client: Letta) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=source("echo_number"))
        assert client.agents.tools.attach(tool.id, agent_id=agent.id) is None
        client.agents.tools.attach(tool.id, agent_id=agent.id)  # twice is a no-op
        assert "echo_number" in tool_names(client, agent.id)
        assert len(client.agents.tools.list(agent.id, limit=100).items) == 4
        assert client.agents.tools.detach(tool.id, agent_id=agent.id) is None
        assert "echo_number" not in tool_names(client, agent.id)

    def test_older_clients_get_the_agent_state(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=source("legacy_tool"))
        response = http.patch(f"/v1/agents/{agent.id}/tools/attach/{tool.id}", headers=LEGACY_CLIENT)
        assert response.status_code == 200
        assert response.json()["id"] == agent.id
        assert "legacy_tool" in {t["name"] for t in response.json()["tools"]}
        response = http.patch(f"/v1/agents/{agent.id}/tools/detach/{tool.id}", headers=LEGACY_CLIENT)
        assert "legacy_tool" not in {t["name"] for t in response.json()["tools"]}

    def test_tool_requiring_approval_gets_a_rule(self, client: Letta) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=source("gated"), default_requires_approval=True)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        assert approval_rules(client, agent.id) == ["gated"]

    def test_unknown_tool_or_agent_404(self, client: Letta) -> None:
        agent = make_agent(client)
        with pytest.raises(NotFoundError):
            client.agents.tools.attach("tool-00000000-0000-4000-8000-000000000001", agent_id=agent.id)
        tool = client.tools.create(source_code=source("lonely"))
        with pytest.raises(NotFoundError):
            client.agents.tools.attach(tool.id, agent_id="agent-00000000-0000-4000-8000-000000000001")

    def test_deleting_a_tool_detaches_it(self, client: Letta) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=source("short_lived"))
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        client.tools.delete(tool.id)
        assert "short_lived" not in tool_names(client, agent.id)
        assert "short_lived" not in {t.name for t in client.agents.retrieve(agent.id, include=["agent.tools"]).tools}


class TestApproval:
    def test_body_adds_and_removes_the_rule(self, client: Letta) -> None:
        agent = make_agent(client)
        result = client.agents.tools.update_approval("memory_insert", agent_id=agent.id, body_requires_approval=True)
        assert result is None
        client.agents.tools.update_approval("memory_insert", agent_id=agent.id, body_requires_approval=True)
        assert approval_rules(client, agent.id) == ["memory_insert"]
        client.agents.tools.update_approval("memory_insert", agent_id=agent.id, body_requires_approval=False)
        assert approval_rules(client, agent.id) == []

    def test_a_tool_gated_by_default_runs_once_the_agent_turns_approval_off(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=source("gated_echo"), default_requires_approval=True)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        client.agents.tools.update_approval("gated_echo", agent_id=agent.id, body_requires_approval=False)
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("gated_echo", {"x": 7}), Reply.text("done"))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "echo"}])
        types = [m.message_type for m in response.messages]
        assert "approval_request_message" not in types
        assert response.stop_reason.stop_reason == "end_turn"
        assert next(m for m in response.messages if m.message_type == "tool_return_message").tool_return == "7"

    def test_deprecated_query_param(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        response = http.patch(
            f"/v1/agents/{agent.id}/tools/approval/memory_replace", params={"requires_approval": "true"}
        )
        assert response.status_code == 200
        assert approval_rules(client, agent.id) == ["memory_replace"]

    def test_missing_value_is_422(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        response = http.patch(f"/v1/agents/{agent.id}/tools/approval/memory_replace")
        assert response.status_code == 422
        assert "requires_approval must be provided" in response.json()["detail"]

    def test_unknown_agent_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.agents.tools.update_approval(
                "memory_insert", agent_id="agent-00000000-0000-4000-8000-000000000001", body_requires_approval=True
            )
