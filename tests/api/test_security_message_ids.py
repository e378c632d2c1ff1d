"""An agent's context holds only its own messages: PATCH rejects other agents' ids, loading skips them."""

import asyncio

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url
from tests.mock_llm import MockLLM, Reply

LLM = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 8000}


def make_agent(http: httpx.Client, name: str) -> str:
    response = http.post("/v1/agents/", json={"name": name, "model": "openai/gpt-4o-mini"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def send(http: httpx.Client, agent_id: str, content: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": content}]})


def message_ids(http: httpx.Client, agent_id: str) -> list[str]:
    return list(http.get(f"/v1/agents/{agent_id}").json()["message_ids"])


def set_message_ids_in_db(pg_uri: str, agent_id: str, ids: list[str]) -> None:
    """What an older memlet let PATCH write: another agent's ids in this agent's context."""

    async def run() -> None:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE agents SET message_ids = :ids WHERE id = :id"), {"ids": ids, "id": agent_id}
            )
        await engine.dispose()

    asyncio.run(run())


def test_patch_with_another_agents_message_ids_is_400(http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    mine, theirs = make_agent(http, "mine"), make_agent(http, "theirs")
    assert send(http, theirs, "the secret of theirs is 4711").status_code == 200
    own_ids = message_ids(http, mine)
    foreign = message_ids(http, theirs)[1:]
    response = http.patch(f"/v1/agents/{mine}", json={"message_ids": [*own_ids, *foreign], "name": "renamed"})
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert all(message_id in detail for message_id in foreign)
    after = http.get(f"/v1/agents/{mine}").json()
    assert (after["message_ids"], after["name"]) == (own_ids, "mine")  # nothing written


def test_patch_with_own_message_ids_still_works(http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    mine = make_agent(http, "mine")
    assert send(http, mine, "hello").status_code == 200
    ids = message_ids(http, mine)
    response = http.patch(f"/v1/agents/{mine}", json={"message_ids": ids[:1]})
    assert response.status_code == 200, response.text
    assert message_ids(http, mine) == ids[:1]


def test_loading_skips_other_agents_messages(http: httpx.Client, mock_llm: MockLLM, pg_uri: str) -> None:
    mock_llm.reset()
    mine, theirs = make_agent(http, "mine"), make_agent(http, "theirs")
    assert send(http, theirs, "the secret of theirs is 4711").status_code == 200
    their_ids = message_ids(http, theirs)
    their_system = http.get(f"/v1/agents/{theirs}/messages", params={"order": "asc", "limit": 1}).json()[0]
    # A context list poisoned before this fix: their system message first, then their whole history.
    set_message_ids_in_db(pg_uri, mine, [*their_ids, *message_ids(http, mine)])
    mock_llm.script(Reply.text("fine"))
    assert send(http, mine, "what do you know?").status_code == 200
    sent = str(mock_llm.requests[-1]["messages"])
    assert "4711" not in sent
    # Recompiling "my" system prompt never rewrites their system message.
    again = http.get(f"/v1/agents/{theirs}/messages", params={"order": "asc", "limit": 1}).json()[0]
    assert again == their_system
