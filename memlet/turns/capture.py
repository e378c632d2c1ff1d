"""Capturing a turn that happened elsewhere: ``POST /v1/agents/{agent_id}/messages/capture`` (a hidden route).

Letta 0.16.8 serves this route outside its OpenAPI document; the agentic-learning SDK posts every LLM call it wraps
(OpenAI, Anthropic, Gemini, Claude Agent SDK) to it. The `request_messages` of role ``user`` and the reply's
``response_dict.content`` are stored as the agent's messages: they show in its history and in recall search, but
not in its context window (its message ids stay as they were). The agent's sleeptime group then counts the capture
as a finished turn, as after a send, and queues its sleeptime runs when the count fires. The answer is
``{"success": true, "messages_created": n, "run_ids": [...]}``.

Where Letta answers a 500 (a message without ``role``, content that is not a string, a reply without
``content``), memlet answers a 422 naming the field.
"""

from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.errors import UnprocessableError
from memlet.messages.repository import MessageRepository
from memlet.turns.sleeptime_runs import SleeptimeRuns


class CaptureMessagesRequest(BaseModel):
    provider: str
    model: str
    request_messages: list[dict[str, Any]]
    response_dict: dict[str, Any]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UnprocessableError(f"{where} must be a string.")
    return value


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for i, message in enumerate(messages):
        if "role" not in message:
            raise UnprocessableError(f"request_messages[{i}] has no 'role'.")
        if message["role"] == "user":
            texts.append(_text(message.get("content"), f"request_messages[{i}].content"))
    return texts


def _row(agent: orm.Agent, actor: Actor, role: str, text: str, model: str | None) -> orm.Message:
    return orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role=role,
        content=[{"type": "text", "text": text}],
        model=model,
        created_by_id=actor.user_id,
    )


async def capture_messages(
    sessionmaker: async_sessionmaker[AsyncSession],
    sleeptime: SleeptimeRuns | None,
    actor: Actor,
    agent_id: str,
    body: CaptureMessagesRequest,
) -> dict[str, Any]:
    """Store the captured turn and fire the agent's sleeptime group; the route's answer."""
    user_texts = _user_texts(body.request_messages)
    reply = _text(body.response_dict.get("content"), "response_dict.content")
    async with sessionmaker() as session, session.begin():
        agent = await AgentRepository(session).get_or_404(actor.organization_id, agent_id)
        rows = [_row(agent, actor, "user", text, None) for text in user_texts]
        rows.append(_row(agent, actor, "assistant", reply, body.model))
        await MessageRepository(session).add(rows)
    run_ids = await sleeptime.after_turn(actor, agent_id, rows[-1].id) if sleeptime is not None else []
    return {"success": True, "messages_created": len(rows), "run_ids": run_ids}
