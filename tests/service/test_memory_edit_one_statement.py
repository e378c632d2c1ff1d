"""A memory edit in the agent's own thread commits in one statement (`loop/edit_write.py`): its prompt is compiled
from the turn's blocks and counts read just before, and written only if nobody rewrote the prompt meanwhile. These
tests check the prompt it leaves against what the stored state compiles, and the two ways a concurrent writer is
caught: a shared block another agent changed during the turn, and a prompt rewritten during the turn."""

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import update

from memlet import ids
from memlet.agents.system_message import compile_system_message, refresh_system_message
from memlet.db import models as orm
from memlet.db.locks import agent_xact_lock
from memlet.loop import commit
from memlet.loop.agent_state import LoopRepository
from memlet.loop.events import RunFinished
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, Outcome, loop_env

__all__ = ["loop_env"]

EDIT = Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes oolong."})


async def _stored(loop_env: LoopEnv, agent: orm.Agent) -> tuple[orm.Message, orm.Agent, dict[str, orm.Block]]:
    """The agent's system message, its row and its blocks by label, as stored."""
    async with loop_env.sessionmaker() as session:
        state = await LoopRepository(session).load_state(agent.id, agent.organization_id)
        row = await session.get(orm.Agent, agent.id)
        assert state is not None and row is not None
        system = await session.get(orm.Message, state.messages[0].id)
        assert system is not None
        return system, row, {b.label: b for b in state.blocks}


async def _expected(loop_env: LoopEnv, agent: orm.Agent) -> str:
    """The prompt the stored state compiles now, at the stored recompile time."""
    async with loop_env.sessionmaker() as session, session.begin():
        fresh = await session.get(orm.Agent, agent.id)
        assert fresh is not None
        return await compile_system_message(session, fresh, update_timestamp=False, with_rules=True)


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    """Record what `commit`'s `name` (`compile_edit`, `recompile`) returns each time it runs."""
    returned: list[Any] = []
    original = getattr(commit, name)

    async def spy(*args: Any) -> Any:
        returned.append(await original(*args))
        return returned[-1]

    monkeypatch.setattr(commit, name, spy)
    return returned


def _text(message: orm.Message) -> str:
    return str((message.content or [{}])[0]["text"])


async def _during_the_llm_call(mock_llm: Any, turn: "asyncio.Task[Outcome]", requests: int = 1) -> None:
    """Wait until the turn's call to the model has arrived (its reply is held back by a delay)."""
    for _ in range(400):
        if len(mock_llm.requests) >= requests:
            return
        assert not turn.done(), turn.result()
        await asyncio.sleep(0.01)
    raise AssertionError("the model was never called")


async def test_the_prompt_of_a_one_statement_edit_is_the_prompt_the_stored_state_compiles(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall count, archival count and tags, blocks and rules: the prompt written without reading the agent again
    equals `compile_system_message` over the stored rows; block and prompt carry the same `updated_at`, so the
    next load sees nothing stale."""
    agent = await loop_env.agent(tools=["memory_insert"])
    org = agent.organization_id
    archive_id = ids.new_id(ids.Prefix.ARCHIVE)
    async with loop_env.sessionmaker() as session, session.begin():
        session.add(orm.Archive(id=archive_id, organization_id=org, name="archive"))
        await session.flush()
        session.add(orm.ArchiveAgent(agent_id=agent.id, archive_id=archive_id, is_owner=True))
        for n, tags in enumerate((["tag-alpha", "tag-beta"], ["tag-beta"], [])):
            passage_id = ids.new_id(ids.Prefix.PASSAGE)
            session.add(orm.Passage(id=passage_id, organization_id=org, archive_id=archive_id, text=f"p{n}", tags=tags))
    await loop_env.send(agent, "hello")
    compiled = _spy(monkeypatch, "compile_edit")
    mock_llm.script(EDIT)
    finished = (await loop_env.send(agent, "remember this", max_steps=1)).events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "max_steps"
    assert len(compiled) == 1 and compiled[0] is not None  # the one-statement commit wrote it
    system, _, blocks = await _stored(loop_env, agent)
    text = _text(system)
    assert all(s in text for s in ("Likes oolong.", "tag-alpha", "tag-beta", "3 total memories"))
    assert text == await _expected(loop_env, agent)
    assert blocks["human"].updated_at == system.updated_at


async def test_a_shared_block_another_agent_wrote_during_the_turn_shows_in_the_prompt(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another agent's memory tool rewrites only its own prompt: a block it shares with this agent, written while
    this agent's model was thinking, must still show in the prompt this agent's edit writes."""
    agent = await loop_env.agent(tools=["memory_insert"])
    _, _, blocks = await _stored(loop_env, agent)
    persona = blocks["persona"]
    compiled = _spy(monkeypatch, "compile_edit")
    mock_llm.script(Reply.delay(0.5, then=EDIT))
    turn = asyncio.create_task(loop_env.send(agent, "remember this", max_steps=1))
    await _during_the_llm_call(mock_llm, turn)
    async with loop_env.sessionmaker() as session, session.begin():
        await session.execute(
            update(orm.Block)
            .where(orm.Block.id == persona.id)
            .values(value="I am a pirate now.", updated_at=datetime.now(UTC))
        )
    finished = (await turn).events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "max_steps"
    assert compiled == [None]  # seen before anything was written: the edit took the locked transaction
    system, _, _ = await _stored(loop_env, agent)
    assert "I am a pirate now." in _text(system) and "Likes oolong." in _text(system)
    assert _text(system) == await _expected(loop_env, agent)


async def test_a_prompt_rewritten_during_the_turn_is_recompiled_from_what_is_stored(
    loop_env: LoopEnv, mock_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A REST change rewrites the prompt while the model is thinking (here: the agent's base prompt, as a PATCH
    does). The edit's block is still written, and the prompt is recompiled from the stored state under the lock: it
    shows both (the turn's next request keeps the prompt the turn started with)."""
    agent = await loop_env.agent(tools=["memory_insert"])
    recompiled = _spy(monkeypatch, "recompile")
    mock_llm.script(Reply.delay(0.5, then=EDIT), Reply.text("noted"))
    turn = asyncio.create_task(loop_env.send(agent, "remember this"))
    await _during_the_llm_call(mock_llm, turn)
    async with loop_env.sessionmaker() as session, session.begin():
        await agent_xact_lock(session, agent.id)
        stored = await session.get(orm.Agent, agent.id)
        assert stored is not None
        stored.system = "You are Zed, a careful archivist."
        await refresh_system_message(session, stored, update_timestamp=False)
    finished = (await turn).events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "end_turn"
    assert len(recompiled) == 1  # the compare-and-set failed
    system, row, blocks = await _stored(loop_env, agent)
    text = _text(system)
    assert "You are Zed, a careful archivist." in text and "Likes oolong." in text
    assert "Likes oolong." in blocks["human"].value
    assert text == await _expected(loop_env, agent)
    sent = mock_llm.requests[1]["messages"][0]["content"]
    assert sent == mock_llm.requests[0]["messages"][0]["content"]  # the turn keeps its prompt (Letta's does too)
    assert row.system_compiled_at is not None
