"""The messages an agent starts with: the system message, and for MemGPT-style agents a boot exchange."""

import json
import uuid
from datetime import UTC, datetime

from memlet.db import models as orm
from memlet.ids import Prefix, new_id
from memlet.messages.packing import pack_login_event, pack_tool_return, pack_user_message
from memlet.messages.requests import MessageCreate

# Agent types whose first turn Letta seeds with a greeting via send_message plus a login event.
BOOT_SEQUENCE_TYPES = frozenset({"memgpt_agent", "memgpt_v2_agent"})
BOOT_GREETING = "More human than human is our motto."


def _message(agent: orm.Agent, role: str, text: str | None, **fields: object) -> orm.Message:
    return orm.Message(
        id=new_id(Prefix.MESSAGE),
        agent_id=agent.id,
        organization_id=agent.organization_id,
        role=role,
        content=[{"type": "text", "text": text}] if text is not None else [],
        model=(agent.llm_config or {}).get("model"),
        created_by_id=agent.created_by_id,
        **fields,
    )


def system_message(agent: orm.Agent) -> orm.Message:
    """The system message; its text is compiled (memory blocks, metadata) right after the agent is stored."""
    return _message(agent, "system", agent.system)


def boot_sequence(agent: orm.Agent) -> list[orm.Message]:
    """A first ``send_message`` call, its return and a login event, as MemGPT agents begin."""
    call_id = str(uuid.uuid4())
    now = datetime.now(UTC)
    tz = agent.timezone
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "send_message", "arguments": json.dumps({"message": BOOT_GREETING})},
    }
    return [
        _message(
            agent,
            "assistant",
            "Bootup sequence complete. Persona activated. Testing messaging functionality.",
            tool_calls=[call],
        ),
        _message(
            agent, "tool", pack_tool_return(True, None, timezone=tz, now=now), name="send_message", tool_call_id=call_id
        ),
        _message(agent, "user", pack_login_event(timezone=tz, now=now)),
    ]


def custom_sequence(agent: orm.Agent, messages: list[MessageCreate]) -> list[orm.Message]:
    """A caller-given ``initial_message_sequence``: user texts are stored packed, as Letta does."""
    rows = []
    for m in messages:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "user":
            text = pack_user_message(text, timezone=agent.timezone)
        rows.append(_message(agent, m.role, text, otid=m.otid, sender_id=m.sender_id, name=m.name))
    return rows


def initial_messages(agent: orm.Agent, sequence: list[MessageCreate] | None) -> list[orm.Message]:
    first = [system_message(agent)]
    if sequence is not None:
        return first + custom_sequence(agent, sequence)
    if agent.agent_type in BOOT_SEQUENCE_TYPES:
        return first + boot_sequence(agent)
    return first
