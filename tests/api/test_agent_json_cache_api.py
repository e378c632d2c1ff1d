"""``GET /v1/agents/`` keeps each listed agent's JSON between requests (`agents/json_cache.py`): a page listed again
is served from the cache, and the page always shows what is stored now, whatever changed (the agent, a block's
value, the blocks attached, tags, the agent's messages) and through whichever path (letta-client 1.12.1, httpx
and SQL against the live server)."""

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from letta_client import Letta
from pydantic import TypeAdapter
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.agents.schemas import AgentState
from memlet.agents.service import AgentService
from memlet.db.engine import async_url
from tests.api.sleeptime_support import EMBEDDING, MODEL
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

PAGE = TypeAdapter(list[AgentState])


def _cache(server: LiveServer) -> Any:
    cache = server.server.config.app.state.agent_json_cache  # type: ignore[attr-defined]
    assert cache is not None  # on by default (MEMLET_AGENT_JSON_CACHE_MB=8)
    return cache


def _page(http: httpx.Client, tag: str) -> list[AgentState]:
    response = http.get("/v1/agents/", params={"tags": tag, "limit": 50})
    assert response.status_code == 200, response.text
    states = PAGE.validate_json(response.content)
    assert response.content == PAGE.dump_json(states, by_alias=True)  # what FastAPI itself would send
    return states


def _agents(client: Letta, tag: str, count: int = 3) -> list[Any]:
    return [
        client.agents.create(
            name=f"{tag}-{n}",
            model=MODEL,
            embedding=EMBEDDING,
            memory_blocks=[{"label": "human", "value": f"Bob {n}"}, {"label": "persona", "value": "Sam"}],
            tags=[tag],
        )
        for n in range(count)
    ]


def test_a_page_listed_again_comes_from_the_cache(server: LiveServer, client: Letta, http: httpx.Client) -> None:
    _agents(client, "cached-page")
    cache = _cache(server)
    first = _page(http, "cached-page")
    hits = cache.hits
    again = _page(http, "cached-page")
    assert cache.hits - hits == 3
    assert [s.model_dump() for s in again] == [s.model_dump() for s in first]


def _sql(server: LiveServer, statement: str, **params: Any) -> None:
    async def run() -> None:
        engine = create_async_engine(async_url(server.server.config.app.state.settings.pg_uri))  # type: ignore[attr-defined]
        async with engine.begin() as conn:
            await conn.execute(text(statement), params)
        await engine.dispose()

    asyncio.run(run())


Change = Callable[[LiveServer, Letta, MockLLM, Any], None]


def _rename(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    client.agents.update(agent.id, name="renamed")


def _block_value(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    human = next(b for b in client.agents.blocks.list(agent.id) if b.label == "human")
    client.blocks.update(human.id, value="Alice")


def _block_by_sql(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    human = next(b for b in client.agents.blocks.list(agent.id) if b.label == "human")
    _sql(server, "UPDATE blocks SET value = 'Carol' WHERE id = :id", id=human.id)  # another process, no API


def _attach_block(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    block = client.blocks.create(label="notes", value="a new block")
    client.agents.blocks.attach(block.id, agent_id=agent.id)


def _detach_block(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    persona = next(b for b in client.agents.blocks.list(agent.id) if b.label == "persona")
    client.agents.blocks.detach(persona.id, agent_id=agent.id)


def _tag(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    client.agents.update(agent.id, tags=["changed", *agent.tags])


def _send(server: LiveServer, client: Letta, mock_llm: MockLLM, agent: Any) -> None:
    mock_llm.script(Reply.text("hi"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])


@pytest.mark.parametrize(
    "change",
    [_rename, _block_value, _block_by_sql, _attach_block, _detach_block, _tag, _send],
    ids=lambda c: c.__name__,
)
def test_the_page_shows_every_change(
    server: LiveServer, client: Letta, http: httpx.Client, mock_llm: MockLLM, change: Change
) -> None:
    tag = f"changes{change.__name__}"
    agents = _agents(client, tag)
    _page(http, tag)
    before = {a["id"]: a for a in http.get("/v1/agents/", params={"tags": tag}).json()}  # cached now
    change(server, client, mock_llm, agents[1])
    listed = {a["id"]: a for a in http.get("/v1/agents/", params={"tags": tag}).json()}
    # The changed agent as the single-agent route (never cached) shows it; the others as before.
    changed = http.get(f"/v1/agents/{agents[1].id}").json()
    assert listed[agents[1].id] == changed != before[agents[1].id]
    assert listed[agents[0].id] == before[agents[0].id] == http.get(f"/v1/agents/{agents[0].id}").json()


def test_an_agent_with_identities_or_secrets_asked_for_is_never_kept(
    server: LiveServer, client: Letta, http: httpx.Client
) -> None:
    [agent] = _agents(client, "uncached", 1)
    identity = http.post("/v1/identities/", json={"identifier_key": "u-cache", "name": "Zoë", "identity_type": "user"})
    client.agents.update(agent.id, identity_ids=[identity.json()["id"]])
    cache = _cache(server)
    _page(http, "uncached")
    hits = cache.hits
    assert _page(http, "uncached")[0].identity_ids == [identity.json()["id"]]
    assert cache.hits == hits
    plain = client.agents.create(name="plain", model=MODEL, embedding=EMBEDDING, tags=["uncached-secrets"])
    params = {"tags": "uncached-secrets", "include": ["agent.secrets"]}
    for _ in range(2):
        assert http.get("/v1/agents/", params=params).json()[0]["id"] == plain.id
    assert cache.hits == hits


def test_deleting_an_agent_drops_what_this_process_keeps_of_it(
    server: LiveServer, client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    [agent] = _agents(client, "forgotten", 1)
    conversation = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("hi"), Reply.text("hi again"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hello"}])
    body = {"messages": [{"role": "user", "content": "hello"}], "streaming": False}
    assert http.post(f"/v1/conversations/{conversation.id}/messages", json=body).status_code == 200
    _page(http, "forgotten")
    json_cache = _cache(server)
    window_cache = server.server.config.app.state.window_cache  # type: ignore[attr-defined]
    json_size, window_size = json_cache.size, window_cache.size
    assert agent.id in json_cache and agent.id in window_cache and conversation.id in window_cache
    client.agents.delete(agent.id)
    assert json_cache.size < json_size and agent.id not in json_cache
    assert window_cache.size < window_size and agent.id not in window_cache and conversation.id not in window_cache


def test_a_page_read_before_a_deletion_does_not_bring_the_agent_back(
    server: LiveServer, client: Letta, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The soak's slow rise: one client's page read its agents, another client deleted one of them, and the page
    then kept the deleted agent's JSON, which nothing would read or drop again."""
    [agent] = _agents(client, "deleted-meanwhile", 1)
    page_read, deleted = threading.Event(), threading.Event()
    original = AgentService._page

    async def paused_after_reading(self: AgentService, *args: Any, **kwargs: Any) -> Any:
        found = await original(self, *args, **kwargs)
        page_read.set()
        await asyncio.to_thread(deleted.wait, 30)  # the server serves the delete meanwhile
        return found

    monkeypatch.setattr(AgentService, "_page", paused_after_reading)
    with ThreadPoolExecutor(1) as pool:
        listing = pool.submit(_page, http, "deleted-meanwhile")
        assert page_read.wait(30)
        monkeypatch.undo()
        client.agents.delete(agent.id)
        deleted.set()
        assert [a.id for a in listing.result(30)] == [agent.id]  # the page as it was read
    assert agent.id not in _cache(server)
    assert _page(http, "deleted-meanwhile") == []
