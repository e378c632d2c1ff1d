"""A step converts its buffer to chat messages once: the compaction check before the call and the request share
the conversion (`loop/buffer_chat.py`), and the request is the same as a conversion of its own."""

from dataclasses import replace
from typing import Any

import orjson
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm
from memlet.llm import chat_format
from memlet.llm.chat_format import thoughts_scrubbed, to_openai_messages
from memlet.loop import buffer_chat
from memlet.loop.agent_state import LoopRepository
from memlet.loop.buffer_chat import BufferChat
from memlet.loop.chat_request import build_chat_request, inner_thoughts_in_kwargs, tool_return_limit
from memlet.loop.compaction_plan import Prompt
from memlet.loop.headroom import byte_bound
from memlet.loop.llm_call import stored_system_text
from memlet.messages.repository import MessageRepository
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env, make_agent

__all__ = ["loop_env"]


async def test_a_step_converts_its_buffer_once(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await loop_env.agent()
    mock_llm.script(Reply.text("one"))
    await loop_env.send(agent, "hi")
    calls: list[int] = []
    real = chat_format.buffer_messages

    def counting(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    # Every conversion path: to_openai_messages looks it up in chat_format, BufferChat in its own module.
    monkeypatch.setattr(chat_format, "buffer_messages", counting)
    monkeypatch.setattr(buffer_chat, "buffer_messages", counting)
    mock_llm.script(Reply.text("two"))
    await loop_env.send(agent, "again")
    assert calls == [3]  # one step, one conversion: hi, one, again


async def test_a_later_step_converts_only_the_rows_the_turn_added(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await loop_env.agent()
    mock_llm.script(Reply.text("one"))
    await loop_env.send(agent, "hi")
    calls: list[int] = []
    real = chat_format.buffer_messages

    def counting(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(buffer_chat, "buffer_messages", counting)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "hi"}), Reply.text("found it"))
    outcome = await loop_env.send(agent, "look it up")
    assert outcome.final.stop_reason == "end_turn"
    # Step 1: hi, one, look it up. Step 2: the committed input, the call and its return after the loaded rows.
    assert calls == [3, 3]
    second = mock_llm.requests[-1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user", "assistant", "tool"]


async def test_a_turn_past_the_size_check_counts_each_message_once(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt too large for its size alone to prove it fits is counted exactly, by the compaction check and for
    `max_tokens`, at every step: the counts are kept with the turn's conversion, so each message is counted once."""
    agent = await loop_env.agent(context_window=8000, llm={"max_tokens": 7500})
    for n in range(3):
        mock_llm.script(Reply.text(f"reply {n} " + "lorem ipsum " * 40))
        await loop_env.send(agent, f"message {n} " + "dolor sit amet " * 40)
    counted: list[int] = []
    real = buffer_chat.message_tokens

    def counting(message: dict[str, Any]) -> int:
        counted.append(id(message))
        return real(message)

    monkeypatch.setattr(buffer_chat, "message_tokens", counting)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "lorem"}), Reply.text("found it"))
    outcome = await loop_env.send(agent, "look it up")
    assert outcome.final.stop_reason == "end_turn"
    first, second = mock_llm.requests[-2:]
    assert first["max_completion_tokens"] < 7500 and second["max_completion_tokens"] < 7500  # both counted exactly
    # Each buffer message once, the input twice (step 1 counts the row being sent, step 2 the committed one), and
    # the system prompt for each of the four counts (two a step).
    assert len(counted) == len(second["messages"]) - 1 + 1 + 4


def _row(agent: orm.Agent, role: str, text: str, **fields: Any) -> orm.Message:
    return orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role=role,
        content=[{"type": "text", "text": text}],
        run_id="run-1",
        **fields,
    )


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"x": 1}'}}


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
CONFIGS = [
    ("letta_v1_agent", {}, 128000),
    ("letta_v1_agent", {"enable_reasoner": False, "max_reasoning_tokens": 0}, 128000),  # thoughts scrubbed
    ("letta_v1_agent", {"model": "o3-mini"}, 128000),  # the system prompt as `developer`
    ("letta_v1_agent", {}, 8000),  # tool returns cut to 6,400 characters
    ("letta_v1_agent", {"max_tokens": 7500}, 8000),  # max_tokens lowered to what the counted prompt leaves
    ("memgpt_v2_agent", {"put_inner_thoughts_in_kwargs": True}, 128000),
    ("memgpt_v2_agent", {"put_inner_thoughts_in_kwargs": False}, 128000),
]


@pytest.mark.parametrize(("agent_type", "llm", "window"), CONFIGS)
async def test_the_shared_conversion_builds_the_same_request(
    session: AsyncSession, agent_type: str, llm: dict[str, Any], window: int
) -> None:
    agent = await make_agent(session, agent_type=agent_type, llm=llm, context_window=window)
    rows = [
        _row(agent, "user", "hello"),
        _row(agent, "assistant", "thinking it over", tool_calls=[_call("call-a", "f")]),
        _row(agent, "approval", "", tool_calls=[_call("call-b", "g")]),  # a mixed response's second half
        _row(agent, "tool", "x" * 7000, tool_call_id="call-a"),
        _row(agent, "tool", "ok", tool_call_id="call-b"),
        _row(agent, "system", "a system note"),
        _row(agent, "summary", "what came before"),
        _row(agent, "assistant", "done"),
    ]
    await MessageRepository(session).add(rows)
    agent.message_ids = [*agent.message_ids, *(r.id for r in rows)]
    await session.flush()
    state = await LoopRepository(session).load_state(agent.id, agent.organization_id)
    assert state is not None
    pending = [_row(agent, "user", "and now?")]
    system = stored_system_text(state)

    # The size check from the kept encodings agrees to the byte with encoding the whole prompt.
    bound = byte_bound(Prompt(system, pending, TOOLS, agent.agent_type).messages(state.messages[1:]), TOOLS)
    for limit, fits in ((bound, True), (bound - 1, False)):
        assert (
            Prompt(system, pending, TOOLS, agent.agent_type, BufferChat()).surely_under(state.messages[1:], limit)
            is fits
        )
    chat = BufferChat()
    config = state.agent.llm_config
    scrub = thoughts_scrubbed(config)
    assert Prompt(system, pending, [], agent.agent_type, chat, scrub).surely_under(state.messages[1:], 10**9)
    shared = build_chat_request(state, system, pending, [], None, chat)
    assert chat.conversions == (2 if agent_type == "memgpt_v2_agent" and not llm["put_inner_thoughts_in_kwargs"] else 1)
    alone = build_chat_request(state, system, pending, [], None)
    assert replace(shared, encoded_messages=None) == alone
    # The messages encoded once by the conversion are the very JSON of the request's messages.
    assert shared.encoded_messages is not None and alone.encoded_messages is None
    assert orjson.dumps(shared.encoded_messages) == orjson.dumps(alone.messages)
    developer = config["model"] == "o3-mini"
    assert shared.messages == to_openai_messages(
        system,
        [*state.messages[1:], *pending],
        agent.agent_type,
        inner_thoughts_in_kwargs=inner_thoughts_in_kwargs(state.agent),
        scrub_thoughts=scrub,
        system_role="developer" if developer else "system",
        tool_return_limit=None if agent_type == "memgpt_v2_agent" else tool_return_limit(config),
    )
    roles = [m["role"] for m in shared.messages]
    assert roles.count("developer") == (2 if developer else 0)
    cut = "[truncated" in str(shared.messages)
    assert cut == (window == 8000)
    if config.get("max_tokens"):  # lowered by the exact count, from the request's kept per-message counts
        assert shared.max_tokens is not None and shared.max_tokens < config["max_tokens"]

    # The compaction's exact counts, from the kept per-message counts, are those of counting the whole prompt.
    kept = Prompt(system, pending, TOOLS, agent.agent_type, BufferChat())
    fresh = Prompt(system, pending, TOOLS, agent.agent_type)
    for rows in (state.messages[1:], state.messages[4:], state.messages[1:]):
        assert kept.tokens(rows) == fresh.tokens(rows)
        assert kept.tokens(rows, "what came before") == fresh.tokens(rows, "what came before")
