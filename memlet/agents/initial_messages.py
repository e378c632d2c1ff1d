"""The messages an agent starts with: the system message, then (Letta's `initialize_message_sequence_async`) a boot
exchange and a login event for every type but `letta_v1_agent` (none) and `sleeptime_agent` (the login only).

The boot exchange has Letta's variants: a gpt-3.5 model's opens with a shorter greeting, and an agent on LM Studio
(`lmstudio_openai`) gets the login first (some of its models want a user message before any tool call) and a
nine-character call id (some want exactly that)."""

import json
import uuid
from datetime import UTC, datetime

from memlet.db import models as orm
from memlet.ids import Prefix, new_id
from memlet.messages.packing import pack_login_event, pack_system_alert, pack_tool_return, pack_user_message
from memlet.messages.requests import MessageCreate

# Agent types that start with no message but the system message, and those that start with a login event only.
NO_INITIAL_TYPES = frozenset({"letta_v1_agent"})
LOGIN_ONLY_TYPES = frozenset({"sleeptime_agent"})
# Types a create with base tools starts with the system message alone (Letta sets their sequence to `[]`).
BARE_WITH_BASE_TOOLS = frozenset({"letta_v1_agent", "sleeptime_agent", "voice_sleeptime_agent"})
BOOT_GREETING = "More human than human is our motto."
BOOT_THOUGHT = "Bootup sequence complete. Persona activated. Testing messaging functionality."
# The opening for gpt-3.5 models (Letta's `startup_with_send_message_gpt35`, in memlet's words).
GPT35_BOOT_THOUGHT = "*inner thoughts* Nobody has written yet. Reaching out with the send_message function."
GPT35_BOOT_GREETING = "Hello, is someone there?"
LMSTUDIO_PROVIDER = "lmstudio_openai"
LMSTUDIO_CALL_ID_LENGTH = 9


def _message(agent: orm.Agent, role: str, text: str | None, **fields: object) -> orm.Message:
    fields.setdefault("created_by_id", agent.created_by_id)
    return orm.Message(
        id=new_id(Prefix.MESSAGE),
        agent_id=agent.id,
        organization_id=agent.organization_id,
        role=role,
        content=[{"type": "text", "text": text}] if text is not None else [],
        model=(agent.llm_config or {}).get("model"),
        **fields,
    )


def system_message(agent: orm.Agent) -> orm.Message:
    """The system message; its text is compiled (memory blocks, metadata) right after the agent is stored."""
    return _message(agent, "system", agent.system)


def default_sequence(agent: orm.Agent, created_by_id: str | None = None) -> list[orm.Message]:
    """What follows the system message of a new agent of its type (also `reset_messages`' default messages)."""
    if agent.agent_type in NO_INITIAL_TYPES:
        return []
    by = created_by_id or agent.created_by_id
    if agent.agent_type in LOGIN_ONLY_TYPES:
        return [_message(agent, "user", pack_login_event(timezone=agent.timezone), created_by_id=by)]
    return boot_sequence(agent, by)


def boot_sequence(agent: orm.Agent, created_by_id: str | None = None) -> list[orm.Message]:
    """A first ``send_message`` call, its return and a login event, as MemGPT agents begin (the login first on LM
    Studio)."""
    by = created_by_id or agent.created_by_id
    config = agent.llm_config or {}
    lmstudio = config.get("provider_name") == LMSTUDIO_PROVIDER
    # Letta cut the uuid's text to nine characters, hyphen included; nine letters and digits are what those
    # models take.
    call_id = uuid.uuid4().hex[:LMSTUDIO_CALL_ID_LENGTH] if lmstudio else str(uuid.uuid4())
    gpt35 = "gpt-3.5" in str(config.get("model") or "")
    thought, greeting = (GPT35_BOOT_THOUGHT, GPT35_BOOT_GREETING) if gpt35 else (BOOT_THOUGHT, BOOT_GREETING)
    now = datetime.now(UTC)
    tz = agent.timezone
    call = {
        "id": call_id,
        "type": "function",
        # Written out over lines, as Letta writes the boot call's arguments.
        "function": {"name": "send_message", "arguments": json.dumps({"message": greeting}, indent=2)},
    }
    exchange = [
        _message(agent, "assistant", thought, tool_calls=[call], created_by_id=by),
        _message(
            agent,
            "tool",
            pack_tool_return(True, None, timezone=tz, now=now),
            name="send_message",
            tool_call_id=call_id,
            created_by_id=by,
        ),
    ]
    login = _message(agent, "user", pack_login_event(timezone=tz, now=now), created_by_id=by)
    return [login, *exchange] if lmstudio else [*exchange, login]


def custom_sequence(agent: orm.Agent, messages: list[MessageCreate]) -> list[orm.Message]:
    """A caller-given ``initial_message_sequence`` as Letta's `package_initial_message_sequence` stores it: user
    texts packed as user messages, system texts as system alerts, assistant texts as a ``send_message`` call (listed
    as the assistant's reply) with its return."""
    rows = []
    tz = agent.timezone
    for m in messages:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "assistant":
            rows += _send_message_exchange(agent, text, m.name)
            continue
        packed = pack_user_message(text, timezone=tz) if m.role == "user" else pack_system_alert(text, timezone=tz)
        rows.append(_message(agent, m.role, packed, otid=m.otid, sender_id=m.sender_id, name=m.name))
    return rows


def _send_message_exchange(agent: orm.Agent, text: str, name: str | None) -> list[orm.Message]:
    call_id = str(uuid.uuid4())
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "send_message", "arguments": json.dumps({"message": text})},
    }
    # Letta's return message is the text "None" (its boot sequence's is null).
    packed = pack_tool_return(True, "None", timezone=agent.timezone)
    returned = {"tool_call_id": call_id, "status": "success", "func_response": packed}
    return [
        _message(agent, "assistant", None, name=name, tool_calls=[call]),
        _message(agent, "tool", packed, name=name, tool_call_id=call_id, tool_returns=[returned]),
    ]


def initial_messages(
    agent: orm.Agent, sequence: list[MessageCreate] | None, *, include_base_tools: bool
) -> list[orm.Message]:
    first = [system_message(agent)]
    if sequence is None and include_base_tools and agent.agent_type in BARE_WITH_BASE_TOOLS:
        sequence = []
    if sequence is not None:
        return first + custom_sequence(agent, sequence)
    return first + default_sequence(agent)
