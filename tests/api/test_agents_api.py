"""Agents CRUD through the official letta-client, as a user's program drives it."""

import json

import httpx
import pytest
from letta_client import Letta, NotFoundError

from tests.shared_paths import SAMPLES

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def make_agent(client: Letta, name: str = "agent", **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("memory_blocks", [{"label": "human", "value": "Name: Bob"}, {"label": "persona", "value": "Sam"}])
    return client.agents.create(name=name, model=MODEL, embedding=EMBEDDING, **kwargs)  # type: ignore[arg-type]


class TestCreateAgent:
    def test_sample_request_gives_sample_shape(self, http: httpx.Client) -> None:
        request = json.loads((SAMPLES / "create_agent_request.json").read_text())
        expected = json.loads((SAMPLES / "create_agent_response.json").read_text())
        response = http.post("/v1/agents/", json=request)
        assert response.status_code == 200, response.text
        agent = response.json()
        assert set(agent) == set(expected)
        assert agent["id"].startswith("agent-")
        assert agent["agent_type"] == "letta_v1_agent"
        assert agent["model"] == MODEL and agent["embedding"] == EMBEDDING
        assert set(agent["llm_config"]) == set(expected["llm_config"])
        assert agent["llm_config"]["context_window"] == 128000
        assert sorted(t["name"] for t in agent["tools"]) == ["conversation_search", "memory_insert", "memory_replace"]
        assert [b["label"] for b in agent["blocks"]] == ["human", "persona"]
        assert set(agent["blocks"][0]) == set(expected["blocks"][0])
        assert agent["blocks"][0]["description"] == expected["blocks"][0]["description"]
        assert agent["tool_rules"] == []
        assert len(agent["message_ids"]) == 1  # letta_v1_agent starts with only its system message

    def test_system_message_holds_compiled_memory(self, client: Letta) -> None:
        agent = make_agent(client)
        messages = client.agents.messages.list(agent.id).items
        system = [m for m in messages if m.message_type == "system_message"]
        assert system and "<memory_blocks>" in system[0].content and "Name: Bob" in system[0].content

    def test_memgpt_v2_gets_send_message_rules_and_boot_messages(self, client: Letta) -> None:
        agent = make_agent(client, agent_type="memgpt_v2_agent")
        names = {t.name for t in agent.tools}
        assert {"send_message", "conversation_search", "memory_insert", "memory_replace"} <= names
        assert {"tool_name": "send_message", "type": "exit_loop"} in [
            {"tool_name": r.tool_name, "type": r.type} for r in agent.tool_rules or []
        ]
        assert len(agent.message_ids or []) == 4

    def test_unknown_handle_404_names_it(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", json={"model": "openai/no-such-model"})
        assert response.status_code == 404
        assert "openai/no-such-model" in response.json()["detail"]

    def test_no_model_400(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", json={"name": "x"})
        assert response.status_code == 400
        assert response.json()["detail"].startswith("INVALID_ARGUMENT")

    def test_malformed_json_422_in_letta_shape(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", content=b"{not json", headers={"content-type": "application/json"})
        assert response.status_code == 422
        body = response.json()
        assert isinstance(body["detail"], str) and "json" in body["detail"].lower()

    def test_block_over_limit_is_stored_as_letta_does(self, client: Letta) -> None:
        # Letta never checks a new agent's blocks against their limits; only POST /v1/blocks/ refuses (400).
        agent = client.agents.create(
            name="big", model=MODEL, memory_blocks=[{"label": "human", "value": "x" * 20, "limit": 10}]
        )
        block = client.agents.blocks.retrieve("human", agent_id=agent.id)
        assert (block.value, block.limit) == ("x" * 20, 10)

    def test_duplicate_label_rejected(self, http: httpx.Client) -> None:
        blocks = [{"label": "human", "value": "a"}, {"label": "human", "value": "b"}]
        response = http.post("/v1/agents/", json={"name": "d", "model": MODEL, "memory_blocks": blocks})
        # Letta: the (agent, label) unique constraint fails, and integrity errors are 409 {"detail": ...}.
        assert response.status_code == 409
        assert response.json() == {"detail": "Duplicate block label 'human': a label must be unique per agent"}

    def test_existing_blocks_attach_in_the_order_named(self, client: Letta) -> None:
        one, two, three = (client.blocks.create(label=label, value=label) for label in ("one", "two", "three"))
        agent = client.agents.create(name="ordered", model=MODEL, block_ids=[two.id, three.id, one.id])
        assert [b.label for b in client.agents.retrieve(agent.id, include=["agent.blocks"]).blocks] == [
            "two",
            "three",
            "one",
        ]


class TestRetrieveAgent:
    def test_unknown_agent_404_names_it(self, client: Letta, http: httpx.Client) -> None:
        missing = "agent-00000000-0000-4000-8000-000000000000"
        response = http.get(f"/v1/agents/{missing}")
        assert response.status_code == 404
        assert response.json() == {"detail": f"Agent with ID {missing} not found"}
        with pytest.raises(NotFoundError):
            client.agents.retrieve(missing)

    def test_malformed_id_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/agents/not-an-id").status_code == 422

    def test_sdk_gets_relationships_only_when_included(self, client: Letta) -> None:
        agent = make_agent(client, tags=["t1"])
        plain = client.agents.retrieve(agent.id)
        assert plain.blocks == [] and plain.tools == [] and plain.tags == []
        full = client.agents.retrieve(agent.id, include=["agent.blocks", "agent.tools", "agent.tags"])
        assert len(full.blocks) == 2 and len(full.tools) == 3 and full.tags == ["t1"]

    def test_plain_http_client_gets_everything(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        body = http.get(f"/v1/agents/{agent.id}", headers={"user-agent": "curl/8.0"}).json()
        assert len(body["blocks"]) == 2 and len(body["tools"]) == 3


class TestListAgents:
    def test_filters(self, client: Letta, http: httpx.Client) -> None:
        make_agent(client, "alpha", tags=["red", "blue"])
        make_agent(client, "beta", tags=["red"])
        make_agent(client, "gamma")
        assert [a.name for a in client.agents.list(name="beta").items] == ["beta"]
        assert {a.name for a in client.agents.list(tags=["red"]).items} == {"alpha", "beta"}
        assert [a.name for a in client.agents.list(tags=["red", "blue"], match_all_tags=True).items] == ["alpha"]
        assert [a.name for a in client.agents.list(query_text="amm").items] == ["gamma"]
        assert http.get("/v1/agents/count").json() == 3
        assert http.get("/v1/agents/count", params={"tags": ["red"]}).json() == 2

    @pytest.mark.parametrize("order", ["asc", "desc"])
    def test_pagination_walks_every_row_once(self, client: Letta, order: str) -> None:
        created = [make_agent(client, f"a{i}", memory_blocks=[]).id for i in range(7)]
        seen = [a.id for a in client.agents.list(limit=2, order=order)]  # type: ignore[arg-type]
        assert sorted(seen) == sorted(created) and len(seen) == len(set(seen))
        assert seen == (created if order == "asc" else created[::-1])

    def test_order_by_last_run_completion_pages_agents_that_never_ran(self, http: httpx.Client, client: Letta) -> None:
        created = {make_agent(client, f"r{i}", memory_blocks=[]).id for i in range(5)}
        seen: list[str] = []
        after = None
        while True:
            params = {"order_by": "last_run_completion", "limit": 2, **({"after": after} if after else {})}
            page = http.get("/v1/agents/", params=params).json()
            if not page:
                break
            seen += [a["id"] for a in page]
            after = page[-1]["id"]
        assert sorted(seen) == sorted(created)

    def test_hidden_agents_and_subagents_are_left_out(self, client: Letta, http: httpx.Client) -> None:
        shown = make_agent(client, "shown", memory_blocks=[])
        hidden = make_agent(client, "hidden", memory_blocks=[], hidden=True)
        subagent = make_agent(client, "helper", memory_blocks=[], tags=["role:subagent"])
        assert subagent.hidden is True  # as Letta does for Letta Code's subagents
        assert [a.id for a in client.agents.list().items] == [shown.id]
        assert http.get("/v1/agents/count").json() == 1
        everyone = http.get("/v1/agents/", params={"show_hidden_agents": "true"}).json()
        assert {a["id"] for a in everyone} == {shown.id, hidden.id, subagent.id}
        assert http.get("/v1/agents/count", params={"show_hidden_agents": "true"}).json() == 3
        assert client.agents.retrieve(hidden.id).id == hidden.id  # hidden, not gone

    def test_order_by_updated_at(self, client: Letta) -> None:
        first, second = (make_agent(client, name, memory_blocks=[]) for name in ("first", "second"))
        client.agents.update(first.id, description="touched")
        assert [a.id for a in client.agents.list(order_by="updated_at").items] == [first.id, second.id]
        assert [a.id for a in client.agents.list(order_by="created_at").items] == [second.id, first.id]
        walked = [a.id for a in client.agents.list(order_by="updated_at", order="asc", limit=1)]
        assert walked == [second.id, first.id]

    def test_before_cursor_returns_closest_rows(self, client: Letta) -> None:
        created = [make_agent(client, f"b{i}", memory_blocks=[]).id for i in range(5)]
        page = client.agents.list(order="asc", before=created[3], limit=2).items
        assert [a.id for a in page] == created[1:3]


class TestModifyAndDelete:
    def test_modify_fields_and_tags(self, client: Letta) -> None:
        agent = make_agent(client)
        updated = client.agents.update(agent.id, name="renamed", description="d", tags=["x"], metadata={"k": 1})
        assert updated.name == "renamed" and updated.description == "d" and updated.metadata == {"k": 1}
        assert client.agents.retrieve(agent.id, include=["agent.tags"]).tags == ["x"]

    def test_delete_keeps_shared_blocks(self, client: Letta, http: httpx.Client) -> None:
        first = make_agent(client, "one")
        full = client.agents.retrieve(first.id, include=["agent.blocks"])
        shared = full.blocks[0].id
        second = client.agents.create(name="two", model=MODEL, block_ids=[shared])
        deleted = http.delete(f"/v1/agents/{first.id}")
        assert deleted.status_code == 200
        assert deleted.json() == {"message": f"Agent id={first.id} successfully deleted"}  # Letta's body
        with pytest.raises(NotFoundError):
            client.agents.retrieve(first.id)
        kept = http.get(f"/v1/blocks/{shared}")
        assert kept.status_code == 200 and kept.json()["id"] == shared
        again = client.agents.retrieve(second.id, include=["agent.blocks"])
        assert [b.id for b in again.blocks] == [shared]
