"""``GET /v1/agents/`` sends its page pre-encoded (memlet/agents/page_json.py): the same bytes as FastAPI's own
serialization of ``list[AgentState]``, on agents with every relationship filled in."""

from typing import Any

import asyncpg
import httpx
import pytest
from letta_client import Letta
from pydantic import TypeAdapter

from memlet.agents.page_json import encode_agents
from memlet.agents.schemas import AgentState
from tests.api.sleeptime_support import EMBEDDING, MODEL, make_main
from tests.api.sql_tasks import task_name

PAGE = TypeAdapter(list[AgentState])
EVERYTHING = [
    "agent.blocks",
    "agent.tools",
    "agent.sources",
    "agent.tags",
    "agent.identities",
    "agent.secrets",
    "agent.managed_group",
]


def rich_agents(client: Letta, http: httpx.Client) -> None:
    """A sleeptime main agent (with its group and sleeptime agent) and an agent with every other relationship."""
    make_main(client, "managing")
    identity = http.post("/v1/identities/", json={"identifier_key": "u-1", "name": "Zoë", "identity_type": "user"})
    assert identity.status_code == 200, identity.text
    client.agents.create(
        name="rich",
        model=MODEL,
        embedding=EMBEDDING,
        description='ünïcode ✓ \u2028 and "quotes" and a tab\t',
        metadata={"float": 0.1, "tiny": 1e-7, "big": 12345678901234, "nested": {"tools": [], "x": None}},
        memory_blocks=[{"label": "human", "value": "Bob 🙂"}, {"label": "persona", "value": "Sam"}],
        tags=["b", "a"],
        secrets={"API_TOKEN": "s3cret"},
        identity_ids=[identity.json()["id"]],
        tool_rules=[{"type": "exit_loop", "tool_name": "send_message"}, {"type": "run_first", "tool_name": "memory"}],
    )


def test_the_page_is_byte_for_byte_what_fastapi_would_send(client: Letta, http: httpx.Client) -> None:
    rich_agents(client, http)
    for include in (EVERYTHING, None):  # everything asked for; the raw-HTTP default
        params = {"include": include} if include else {}
        response = http.get("/v1/agents/", params=params)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/json"
        states = PAGE.validate_json(response.content)
        assert len(states) == 3 and {s.name for s in states} >= {"rich", "managing"}
        by_name = {s.name: s for s in states}
        assert by_name["managing"].managed_group is not None
        assert by_name["rich"].tools and by_name["rich"].tags == ["a", "b"] and by_name["rich"].identities
        assert bool(by_name["rich"].secrets) == (include is not None)
        # What FastAPI's response_model=list[AgentState] serialization gives, and the encoder on the same states.
        assert response.content == PAGE.dump_json(states, by_alias=True)
        assert encode_agents(states) == PAGE.dump_json(states, by_alias=True)


def test_an_empty_page_is_an_empty_array(http: httpx.Client) -> None:
    response = http.get("/v1/agents/", params={"name": "nobody"})
    assert response.status_code == 200 and response.content == b"[]"


def test_the_list_runs_without_begin_and_commit(http: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its three SELECTs run in autocommit (agents/deps.py: get_agent_reader): no BEGIN/COMMIT round trips."""
    assert http.post("/v1/agents/", json={"name": "one", "model": MODEL, "embedding": EMBEDDING}).status_code == 200
    simple: list[str] = []
    execute = asyncpg.Connection.execute

    async def logged(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> str:
        if task_name().startswith("Task-"):  # the request's; the server's background work runs in named tasks
            simple.append(query.strip())
        return await execute(self, query, *args, **kwargs)

    monkeypatch.setattr(asyncpg.Connection, "execute", logged)
    response = http.get("/v1/agents/")
    assert response.status_code == 200 and len(response.json()) == 1
    assert not [q for q in simple if q.startswith(("BEGIN", "COMMIT"))], simple
