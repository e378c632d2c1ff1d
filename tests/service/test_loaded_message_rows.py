"""A fully loaded message row is validated from its ``__dict__`` (`db/loaded.py`, ~3x faster than through its
attributes; every history listing validates each row of its page): the public message is the same either way, and a
row with an expired column is read through its attributes."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm
from memlet.db.loaded import model_input
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import StoredMessage
from memlet.messages.views import to_letta_messages
from tests.service.loop_factories import make_agent


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": '{"q": "tea"}'}}


async def test_a_loaded_message_row_gives_the_message_its_attributes_give(session: AsyncSession) -> None:
    agent = await make_agent(session)
    common = {"organization_id": agent.organization_id, "agent_id": agent.id, "run_id": "run-1", "step_id": "step-1"}
    rows = [
        orm.Message(id=ids.new_id(ids.Prefix.MESSAGE), role="user", content=[{"type": "text", "text": "hé"}], **common),
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            role="assistant",
            content=[{"type": "reasoning", "reasoning": "hmm", "is_native": True}],
            tool_calls=[_call("call-1")],
            otid="otid-1",
            **common,
        ),
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            role="tool",
            content=[{"type": "text", "text": '{"status": "OK"}'}],
            tool_call_id="call-1",
            tool_returns=[{"tool_call_id": "call-1", "status": "success", "func_response": "OK"}],
            is_err=False,
            **common,
        ),
    ]
    await MessageRepository(session).add(rows)
    loaded = (await session.scalars(select(orm.Message).where(orm.Message.id.in_([r.id for r in rows])))).all()
    assert len(loaded) == 3
    seen = []
    for row in loaded:
        assert model_input(row) is row.__dict__  # every column loaded: the fast path
        fast = StoredMessage.model_validate(model_input(row))
        session.expire(row, ["otid"])  # one column expired: read through the attributes (a lazy load)
        assert model_input(row) is row
        slow = await session.run_sync(lambda _, row=row: StoredMessage.model_validate(row))
        assert fast == slow
        assert to_letta_messages([fast], text_is_assistant=True) == to_letta_messages([slow], text_is_assistant=True)
        seen.append(fast)
    assert {m.role for m in seen} == {"user", "assistant", "tool"}
    assert any(m.tool_returns and m.tool_returns[0].tool_call_id == "call-1" for m in seen)
