"""`memlet_message_text`, what message search matches: the text a stored row gets for each shape of message, and
the function's language (PL/pgSQL keeps its plans for the session; the SQL version was planned again in every
INSERT and UPDATE of messages, ~0.15 ms of Postgres CPU per statement)."""

import json

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm

ORG, AGENT = "org-msgtext", "agent-msgtext"

CALL = {"id": "c1", "type": "function", "function": {"name": "send_message", "arguments": '{"message": "hi"}'}}
CASES = [
    # role, content, tool_calls, the text search gets
    ("user", [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}], None, "hello world"),
    ("assistant", [{"type": "text", "text": "sure"}], [CALL], 'sure {"message": "hi"}'),
    ("assistant", None, [CALL, {"function": {"name": "x"}}], '{"message": "hi"}'),
    ("tool", [{"type": "text", "text": ""}, {"text": None}, "a bare string", 7, {"text": 5}], None, " 5"),
    ("user", [[{"text": "nested"}]], None, ""),
    ("user", {"text": "not a list"}, {"function": {"arguments": "not a list"}}, ""),
    ("system", [{"type": "text", "text": "the prompt"}], None, ""),
    ("approval", [{"type": "text", "text": "approve?"}], [CALL], ""),
]


async def _insert(session: AsyncSession, index: int, role: str, content: object, tool_calls: object) -> str:
    message_id = f"message-text-{index}"
    await session.execute(
        text(
            "INSERT INTO messages (id, agent_id, organization_id, role, content, tool_calls) "
            "VALUES (:id, :agent, :org, :role, CAST(:content AS jsonb), CAST(:calls AS jsonb))"
        ),
        {
            "id": message_id,
            "agent": AGENT,
            "org": ORG,
            "role": role,
            "content": json.dumps(content),
            "calls": None if tool_calls is None else json.dumps(tool_calls),
        },
    )
    return message_id


async def test_each_shape_of_message_stores_the_text_search_matches(session: AsyncSession) -> None:
    session.add(orm.Organization(id=ORG, name="x"))
    await session.flush()
    session.add(orm.Agent(id=AGENT, name="x", organization_id=ORG, llm_config={}))
    await session.flush()
    for index, (role, content, tool_calls, expected) in enumerate(CASES):
        message_id = await _insert(session, index, role, content, tool_calls)
        stored = (
            await session.execute(
                text("SELECT search_text, search_tsv::text FROM messages WHERE id = :id"), {"id": message_id}
            )
        ).one()
        assert stored.search_text == expected, (role, content, tool_calls)
        tsv = await session.scalar(text("SELECT to_tsvector('simple', CAST(:t AS text))::text"), {"t": expected})
        assert stored.search_tsv == tsv

    # An UPDATE of the content computes it again (a rewritten message is found by its new text).
    await session.execute(
        text("UPDATE messages SET content = CAST(:c AS jsonb) WHERE id = 'message-text-0'"),
        {"c": json.dumps([{"type": "text", "text": "rewritten"}])},
    )
    assert await session.scalar(text("SELECT search_text FROM messages WHERE id = 'message-text-0'")) == "rewritten"


@pytest.mark.parametrize("role", [None, "system"])
async def test_other_roles_and_no_role_give_nothing(session: AsyncSession, role: str | None) -> None:
    found = await session.scalar(
        text('SELECT memlet_message_text(:role, \'[{"text": "x"}]\'::jsonb, NULL)'), {"role": role}
    )
    assert found == ""


async def test_the_function_keeps_its_plans_between_statements(session: AsyncSession) -> None:
    """A SQL function with subqueries is never inlined: Postgres parsed and planned its body in every statement
    that wrote a message (twice: two generated columns). PL/pgSQL plans it once per connection."""
    language = await session.scalar(
        text(
            "SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
            "WHERE p.proname = 'memlet_message_text'"
        )
    )
    assert language == "plpgsql"
