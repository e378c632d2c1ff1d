"""A thread's in-context rows are kept between turns (`loop/window_cache.py`): a turn reads in full only the rows
that are new or changed since the thread's last load, and a row another writer changed, deleted or a memory edit
rewrote reaches the model as it is stored now."""

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import text

from memlet.db.sql import int_array, text_array
from memlet.loop.agent_state import LoopRepository
from memlet.loop.window_cache import ROW_OVERHEAD, WindowCache
from memlet.messages.repository import MessageRepository
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]


@pytest.fixture
async def cached(loop_env: LoopEnv) -> tuple[LoopEnv, WindowCache]:
    cache = WindowCache(max_bytes=64 * 1024 * 1024)
    loop_env.deps = replace(loop_env.deps, window_cache=cache)
    return loop_env, cache


async def _chat(env: LoopEnv, mock_llm: Any, agent: Any, turns: int) -> None:
    for i in range(turns):
        mock_llm.script(Reply.text(f"reply {i}"))
        outcome = await env.send(agent, f"message {i}")
        assert outcome.final.stop_reason == "end_turn"


async def _delete_first_reply(env: LoopEnv, agent: Any) -> None:
    """Delete the agent's first reply behind the loop's back, as any other writer could."""
    reply = next(r for r in await env.in_context(agent.id) if r.role == "assistant" and r.run_id)
    async with env.sessionmaker() as session, session.begin():
        await session.execute(text("DELETE FROM messages WHERE id = :id"), {"id": reply.id})


def _texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"][1:] if isinstance(m.get("content"), str)]


async def test_a_turn_reads_in_full_only_what_the_last_turn_wrote(
    cached: tuple[LoopEnv, WindowCache], mock_llm: Any
) -> None:
    env, cache = cached
    agent = await env.agent()
    await _chat(env, mock_llm, agent, 3)
    before = cache.rows_read
    mock_llm.script(Reply.text("reply 3"))
    await env.send(agent, "fourth")
    # The last turn's input and reply: every older row of the window came from the cache.
    assert cache.rows_read - before == 2
    assert _texts(mock_llm.requests[-1])[-7:] == [
        "message 0",
        "reply 0",
        "message 1",
        "reply 1",
        "message 2",
        "reply 2",
        "fourth",
    ]


async def test_a_row_changed_by_another_writer_reaches_the_model_as_stored(
    cached: tuple[LoopEnv, WindowCache], mock_llm: Any
) -> None:
    env, cache = cached
    agent = await env.agent()
    await _chat(env, mock_llm, agent, 2)
    first = next(r for r in await env.in_context(agent.id) if r.role == "user")
    async with env.sessionmaker() as session, session.begin():  # another worker, or any writer
        await session.execute(
            text("UPDATE messages SET content = CAST(:c AS jsonb) WHERE id = :id"),
            {"c": '[{"type": "text", "text": "edited elsewhere"}]', "id": first.id},
        )
    before = cache.rows_read
    mock_llm.script(Reply.text("ok"))
    await env.send(agent, "next")
    texts = _texts(mock_llm.requests[-1])
    assert "edited elsewhere" in texts and "message 0" not in texts
    assert cache.rows_read - before == 3  # the edited row and the last turn's two


async def test_the_load_sends_back_only_the_positions_that_differ(
    cached: tuple[LoopEnv, WindowCache], mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unchanged rows cost the load nothing but their version check: the statement returns the rows the last turn
    wrote and the id whose row is gone, not the whole window."""
    env, _ = cached
    agent = await env.agent()
    await _chat(env, mock_llm, agent, 3)
    await _delete_first_reply(env, agent)
    returned: list[list[tuple[int, int | None, Any]]] = []
    real = MessageRepository.revalidate

    async def recording(self: MessageRepository, *args: Any) -> list[tuple[int, int | None, Any]]:
        found = await real(self, *args)
        returned.append(found)
        return found

    monkeypatch.setattr(MessageRepository, "revalidate", recording)
    mock_llm.script(Reply.text("ok"))
    await env.send(agent, "next")
    assert "reply 0" not in _texts(mock_llm.requests[-1])
    found = returned[0]
    assert [version is None for _, version, _ in found] == [True, False, False]  # the deleted reply, turn 3's rows
    assert [row.content[0]["text"] for _, _, row in found[1:]] == ["message 2", "reply 2"]


async def test_a_deleted_row_leaves_the_prompt(cached: tuple[LoopEnv, WindowCache], mock_llm: Any) -> None:
    env, _ = cached
    agent = await env.agent()
    await _chat(env, mock_llm, agent, 2)
    await _delete_first_reply(env, agent)
    mock_llm.script(Reply.text("ok"))
    await env.send(agent, "next")
    texts = _texts(mock_llm.requests[-1])
    assert "reply 0" not in texts and texts[-3:] == ["message 1", "reply 1", "next"]


async def test_a_memory_edit_shows_in_the_next_turns_system_prompt(
    cached: tuple[LoopEnv, WindowCache], mock_llm: Any
) -> None:
    env, _ = cached
    agent = await env.agent(blocks={"human": "Name: Sam"})
    await _chat(env, mock_llm, agent, 1)
    mock_llm.script(
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes green tea."}), Reply.text("noted")
    )
    await env.send(agent, "remember this")
    mock_llm.script(Reply.text("ok"))
    await env.send(agent, "next")
    assert "Likes green tea." in mock_llm.requests[-1]["messages"][0]["content"]


async def test_the_cache_is_bounded_by_the_rows_size(loop_env: LoopEnv, mock_llm: Any) -> None:
    agents = [await loop_env.agent() for _ in range(3)]
    for agent in agents:
        await _chat(loop_env, mock_llm, agent, 1)
    mock_llm.script(Reply.text("x" * 50_000))  # a large row counts for its size, not as one row
    await loop_env.send(agents[1], "a long answer, please")
    windows = {a.id: [r.id for r in await loop_env.in_context(a.id)] for a in agents}
    async with loop_env.sessionmaker() as session:
        sizes = {}
        for agent in agents:
            probe = WindowCache(max_bytes=10**9)
            await LoopRepository(session, probe).load_state(agent.id, agent.organization_id)
            sizes[agent.id] = probe.size
        first, big, third = (sizes[a.id] for a in agents)
        assert big > first + 50_000 and first == third
        assert first >= ROW_OVERHEAD * len(windows[agents[0].id])

        cache = WindowCache(max_bytes=first + third)
        repo = LoopRepository(session, cache)
        for agent in [agents[0], agents[2], agents[1]]:
            state = await repo.load_state(agent.id, agent.organization_id)
            assert state is not None and [r.id for r in state.messages] == windows[agent.id]
        # The big thread is larger than the cache: never held; the two small ones stay.
        assert cache.size == first + third and len(cache) == 2 * len(windows[agents[0].id])
        before = cache.rows_read
        await repo.load_state(agents[0].id, agents[0].organization_id)
        await repo.load_state(agents[2].id, agents[2].organization_id)
        assert cache.rows_read == before  # both still held
        small = WindowCache(max_bytes=first + first // 2)
        repo = LoopRepository(session, small)
        for agent in [agents[0], agents[2], agents[0]]:
            await repo.load_state(agent.id, agent.organization_id)
        # Loading the third thread evicted the least recently loaded one, which was then read in full again.
        assert small.size == first and small.rows_read == 3 * len(windows[agents[0].id])


async def test_array_literals_round_trip_any_text(loop_env: LoopEnv) -> None:
    values = ["plain", 'a"quote', "back\\slash", "com,ma", "{brace}", " spaced ", "", "NULL", "é\u2603"]
    async with loop_env.sessionmaker() as session:
        texts = await session.scalar(text("SELECT CAST(CAST(:v AS text) AS varchar[])"), {"v": text_array(values)})
        numbers = await session.scalar(text("SELECT CAST(CAST(:v AS text) AS bigint[])"), {"v": int_array([0, 7])})
        empty = await session.scalar(text("SELECT CAST(CAST(:v AS text) AS varchar[])"), {"v": text_array([])})
    assert texts == values and numbers == [0, 7] and empty == []


async def test_a_load_begun_before_the_agents_deletion_keeps_nothing(
    cached: tuple[LoopEnv, WindowCache], mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, cache = cached
    agent = await env.agent()
    await _chat(env, mock_llm, agent, 1)
    assert agent.id in cache
    original = MessageRepository.revalidate

    async def deleted_meanwhile(self: MessageRepository, *args: Any, **kwargs: Any) -> Any:
        found = await original(self, *args, **kwargs)
        cache.forget_agent(agent.id)  # what the delete route does, while this load awaited its rows
        return found

    monkeypatch.setattr(MessageRepository, "revalidate", deleted_meanwhile)
    await _chat(env, mock_llm, agent, 1)
    assert agent.id not in cache and len(cache) == 0 and cache.size == 0
