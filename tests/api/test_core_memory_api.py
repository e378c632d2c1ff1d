"""``/v1/agents/{id}/core-memory`` through the official letta-client: blocks by label, attach/detach, sharing."""

import asyncio

import httpx
import pytest
from letta_client import ConflictError, Letta, NotFoundError, UnprocessableEntityError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
MISSING_AGENT = "agent-00000000-0000-4000-8000-000000000000"
MISSING_BLOCK = "block-00000000-0000-4000-8000-000000000000"


def make_agent(client: Letta, name: str = "agent", **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("memory_blocks", [{"label": "human", "value": "Name: Bob"}, {"label": "persona", "value": "Sam"}])
    return client.agents.create(name=name, model=MODEL, embedding=EMBEDDING, **kwargs)  # type: ignore[arg-type]


def system_prompt(pg_uri: str, agent_id: str) -> str:
    """The stored system message the model will see (the first in-context message)."""

    async def read() -> str:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.connect() as conn:
            row = await conn.execute(
                text("SELECT m.content FROM agents a JOIN messages m ON m.id = a.message_ids[1] WHERE a.id = :id"),
                {"id": agent_id},
            )
            content = row.scalar_one()
        await engine.dispose()
        return "".join(part.get("text", "") for part in content)

    return asyncio.run(read())


class TestListCoreMemoryBlocks:
    def test_lists_agent_blocks(self, client: Letta) -> None:
        agent = make_agent(client)
        blocks = list(client.agents.blocks.list(agent.id))
        assert sorted(b.label or "" for b in blocks) == ["human", "persona"]
        assert all(b.id.startswith("block-") for b in blocks)

    def test_pagination_both_orders(self, client: Letta) -> None:
        agent = make_agent(client, memory_blocks=[{"label": f"b{i}", "value": str(i)} for i in range(5)])
        asc = [b.id for b in client.agents.blocks.list(agent.id, limit=2, order="asc")]
        desc = [b.id for b in client.agents.blocks.list(agent.id, limit=2, order="desc")]
        assert len(asc) == 5 and len(set(asc)) == 5
        assert desc == asc[::-1]

    def test_unknown_agent_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError) as err:
            client.agents.blocks.list(MISSING_AGENT)
        assert err.value.body == {"detail": f"Agent with ID {MISSING_AGENT} not found"}


class TestRetrieveCoreMemoryBlock:
    def test_by_label(self, client: Letta) -> None:
        agent = make_agent(client)
        block = client.agents.blocks.retrieve("human", agent_id=agent.id)
        assert (block.label, block.value) == ("human", "Name: Bob")

    def test_unknown_label_404(self, client: Letta) -> None:
        agent = make_agent(client)
        with pytest.raises(NotFoundError) as err:
            client.agents.blocks.retrieve("nope", agent_id=agent.id)
        assert "'nope'" in err.value.body["detail"]  # type: ignore[index]

    def test_malformed_agent_id_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/agents/agent-1/core-memory/blocks/human").status_code == 422


class TestModifyCoreMemoryBlock:
    def test_updates_value_and_recompiles_prompt(self, client: Letta, pg_uri: str) -> None:
        agent = make_agent(client)
        updated = client.agents.blocks.update("human", agent_id=agent.id, value="Name: Ann")
        assert updated.value == "Name: Ann"
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Ann"
        prompt = system_prompt(pg_uri, agent.id)
        assert "Name: Ann" in prompt and "Name: Bob" not in prompt

    def test_over_limit_422_nothing_written(self, client: Letta, pg_uri: str) -> None:
        agent = make_agent(client, memory_blocks=[{"label": "human", "value": "Bob", "limit": 8}])
        with pytest.raises(UnprocessableEntityError) as err:
            client.agents.blocks.update("human", agent_id=agent.id, value="x" * 9)
        detail = err.value.body["detail"]  # type: ignore[index]
        assert "8" in detail and "9" in detail
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Bob"
        assert "x" * 9 not in system_prompt(pg_uri, agent.id)

    def test_block_past_its_limit_takes_edits_of_other_fields(self, client: Letta) -> None:
        # The memory tools do not enforce the limit (as Letta), so a block can grow past it; a PATCH that sets
        # neither `value` nor `limit` must still apply, by label and by id.
        agent = make_agent(client, memory_blocks=[{"label": "human", "value": "Bob", "limit": 5}])
        client.agents.tools.run(
            agent_id=agent.id, tool_name="memory_insert", args={"label": "human", "new_string": "likes tea"}
        )
        grown = client.agents.blocks.retrieve("human", agent_id=agent.id)
        assert (grown.value, grown.limit) == ("Bob\nlikes tea", 5)
        by_label = client.agents.blocks.update("human", agent_id=agent.id, description="d")
        by_id = client.blocks.update(grown.id, tags=["t"], read_only=True)
        assert (by_label.description, by_id.tags, by_id.read_only) == ("d", ["t"], True)
        assert by_id.value == grown.value
        with pytest.raises(UnprocessableEntityError):  # setting the value still checks it
            client.blocks.update(grown.id, value=grown.value)

    def test_relabel_to_taken_label_409_names_it(self, client: Letta) -> None:
        agent = make_agent(client)
        with pytest.raises(ConflictError) as err:
            client.agents.blocks.update("persona", agent_id=agent.id, label="human")
        assert "'human'" in err.value.body["detail"]  # type: ignore[index]
        assert client.agents.blocks.retrieve("persona", agent_id=agent.id).value == "Sam"

    def test_unknown_agent_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.agents.blocks.update("human", agent_id=MISSING_AGENT, value="x")


class TestAttachDetach:
    def test_attach_returns_agent_with_block(self, client: Letta, pg_uri: str) -> None:
        agent = make_agent(client)
        block = client.blocks.create(label="notes", value="remember milk")
        state = client.agents.blocks.attach(block.id, agent_id=agent.id)
        assert state.id == agent.id
        assert {b.label for b in state.blocks} == {"human", "persona", "notes"}
        assert "remember milk" in system_prompt(pg_uri, agent.id)
        again = client.agents.blocks.attach(block.id, agent_id=agent.id)
        assert len(again.blocks) == 3

    def test_attach_duplicate_label_409(self, client: Letta) -> None:
        agent = make_agent(client)
        block = client.blocks.create(label="human", value="another human")
        with pytest.raises(ConflictError) as err:
            client.agents.blocks.attach(block.id, agent_id=agent.id)
        assert "'human'" in err.value.body["detail"]  # type: ignore[index]
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Bob"

    def test_attach_unknown_404s(self, client: Letta) -> None:
        agent = make_agent(client)
        block = client.blocks.create(label="notes", value="v")
        with pytest.raises(NotFoundError) as err:
            client.agents.blocks.attach(MISSING_BLOCK, agent_id=agent.id)
        assert err.value.body == {"detail": f"Block with id '{MISSING_BLOCK}' not found"}
        with pytest.raises(NotFoundError) as err:
            client.agents.blocks.attach(block.id, agent_id=MISSING_AGENT)
        assert err.value.body == {"detail": f"Agent with ID {MISSING_AGENT} not found"}

    def test_detach_keeps_block_and_updates_prompt(self, client: Letta, pg_uri: str) -> None:
        agent = make_agent(client)
        human = client.agents.blocks.retrieve("human", agent_id=agent.id)
        state = client.agents.blocks.detach(human.id, agent_id=agent.id)
        assert [b.label for b in state.blocks] == ["persona"]
        assert "Name: Bob" not in system_prompt(pg_uri, agent.id)
        assert client.blocks.retrieve(human.id).value == "Name: Bob"
        with pytest.raises(NotFoundError):
            client.agents.blocks.detach(human.id, agent_id=agent.id)


class TestSharedBlock:
    def test_edit_seen_by_every_agent(self, client: Letta, pg_uri: str) -> None:
        shared = client.blocks.create(label="team", value="Deadline: Friday")
        first = make_agent(client, "first", block_ids=[shared.id])
        second = make_agent(client, "second")
        client.agents.blocks.attach(shared.id, agent_id=second.id)
        client.agents.blocks.update("team", agent_id=first.id, value="Deadline: Monday")
        for agent in (first, second):
            assert client.agents.blocks.retrieve("team", agent_id=agent.id).value == "Deadline: Monday"
            prompt = system_prompt(pg_uri, agent.id)
            assert "Deadline: Monday" in prompt and "Deadline: Friday" not in prompt
        assert client.blocks.retrieve(shared.id).value == "Deadline: Monday"
        assert len(list(client.blocks.list(label="team"))) == 1


class TestRetrieveAgentMemory:
    def test_deprecated_memory_view(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        response = http.get(f"/v1/agents/{agent.id}/core-memory")
        assert response.status_code == 200
        memory = response.json()
        assert set(memory) == {"agent_type", "git_enabled", "blocks", "file_blocks", "prompt_template"}
        assert memory["agent_type"] == "letta_v1_agent"
        assert [b["label"] for b in memory["blocks"]] == ["human", "persona"]
        assert (memory["file_blocks"], memory["prompt_template"], memory["git_enabled"]) == ([], "", False)

    def test_unknown_agent_404(self, http: httpx.Client) -> None:
        response = http.get(f"/v1/agents/{MISSING_AGENT}/core-memory")
        assert response.status_code == 404
        assert response.json() == {"detail": f"Agent with ID {MISSING_AGENT} not found"}
