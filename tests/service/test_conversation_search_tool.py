"""`conversation_search` without vectors in scope: its statements go straight to the driver, no ORM session."""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.engine import create_engine
from memlet.loop.builtin_tools import ToolContext, conversation_search
from memlet.messages.repository import MessageRepository
from tests.service.loop_factories import make_agent


class _CountingMaker(async_sessionmaker[AsyncSession]):
    """A sessionmaker that counts the sessions it makes."""

    made = 0

    def __call__(self, **local_kw: Any) -> AsyncSession:
        type(self).made += 1
        return super().__call__(**local_kw)


async def test_a_search_without_vectors_opens_no_session(pg_uri: str) -> None:
    engine = create_engine(pg_uri, Settings())
    maker = _CountingMaker(engine, expire_on_commit=False)
    try:
        async with maker() as session, session.begin():
            agent = await make_agent(session)
            texts = ["I like green tea", "coffee only", "teapots are nice"]
            rows = [
                orm.Message(
                    id=ids.new_id(ids.Prefix.MESSAGE),
                    organization_id=agent.organization_id,
                    agent_id=agent.id,
                    role="user",
                    content=[{"type": "text", "text": text}],
                )
                for text in texts
            ]
            await MessageRepository(session).add(rows)
        _CountingMaker.made = 0
        # An embedder is set, so the tool first asks whether the scope has vectors (it has none).
        ctx = ToolContext(agent=agent, blocks=[], sessionmaker=maker, embedder=object())  # type: ignore[arg-type]
        found = await conversation_search(ctx, query="tea")
        assert found["message"] == "Showing 2 results:"
        assert {r["content"] for r in found["results"]} == {"I like green tea", "teapots are nice"}
        assert _CountingMaker.made == 0
        assert await conversation_search(ctx, query="tea", roles=["tool"]) == {
            "message": "No results found.",
            "results": [],
        }
    finally:
        await engine.dispose()
