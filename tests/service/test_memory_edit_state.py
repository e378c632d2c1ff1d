"""After a memory edit in the agent's own thread, the next step goes on from what the edit's commit read back
(`commit.Remembered`, `RunState.remember`) instead of reloading the agent: that state must be the one a reload
would read, and the next request must show the edit."""

import copy
from typing import Any

import pytest
from sqlalchemy import func, select

from memlet import ids
from memlet.agents.system_message import compile_system_message
from memlet.db import models as orm
from memlet.loop import run_tracker
from memlet.loop.agent_state import LoopRepository, LoopState
from memlet.loop.events import MessagesCommitted, RunFinished
from memlet.loop.runner import RunOptions, run_agent
from memlet.messages.requests import MessageCreate
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]

_AGENT_FIELDS = ("id", "message_ids", "system_compiled_at", "message_count", "llm_config", "tool_rules", "system")
_BLOCK_FIELDS = ("id", "label", "value", "description", "limit", "read_only", "hidden")


def _agent(agent: orm.Agent) -> dict[str, Any]:
    return {name: getattr(agent, name) for name in _AGENT_FIELDS}


def _blocks(state: LoopState) -> list[dict[str, Any]]:
    return [{name: getattr(block, name) for name in _BLOCK_FIELDS} for block in state.blocks]


def _messages(state: LoopState) -> list[tuple[str, Any]]:
    return [(row.id, row.content) for row in state.messages]


@pytest.mark.parametrize(
    "edit",
    [
        ("memory_insert", {"label": "human", "new_string": "Likes tea."}),
        ("memory", {"command": "create", "path": "/memories/projects", "description": "Work.", "file_text": "x"}),
        ("memory", {"command": "delete", "path": "/memories/human"}),
    ],
)
async def test_the_state_after_a_memory_edit_is_the_state_a_reload_reads(
    loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch, edit: tuple[str, dict[str, Any]]
) -> None:
    agent = await loop_env.agent(tools=["memory_insert", "memory"])
    remembered: list[tuple[Any, ...]] = []
    remember = run_tracker.RunState.remember

    def recording(self: run_tracker.RunState, state: LoopState, *args: Any) -> None:
        remember(self, state, *args)
        snapshot = (_agent(state.agent), _blocks(state), [t.id for t in state.tools], _messages(state))
        remembered.append(copy.deepcopy(snapshot))

    monkeypatch.setattr(run_tracker.RunState, "remember", recording)
    reloaded: list[LoopState] = []
    mock_llm.script(Reply.tool_call(*edit), Reply.text("done"))
    events = []
    async for event in run_agent(
        loop_env.deps,
        agent_id=agent.id,
        actor_org_id=agent.organization_id,
        run_id=ids.new_id(ids.Prefix.RUN),
        inputs=[MessageCreate(role="user", content="remember this")],
        options=RunOptions(),
    ):
        events.append(event)
        if isinstance(event, MessagesCommitted) and not reloaded:  # between the two steps: what a reload reads
            async with loop_env.sessionmaker() as session:
                fresh = await LoopRepository(session).load_state(agent.id, agent.organization_id)
            assert fresh is not None
            reloaded.append(fresh)
    assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == "end_turn"
    [(agent_row, blocks, tools, messages)], [fresh] = remembered, reloaded
    assert agent_row == _agent(fresh.agent)
    assert blocks == _blocks(fresh)
    assert tools == [t.id for t in fresh.tools]
    assert messages == _messages(fresh)
    system = mock_llm.requests[1]["messages"][0]["content"]
    assert system == fresh.messages[0].content[0]["text"]  # the model was sent the recompiled prompt


async def test_a_memory_edit_that_ends_the_turn_writes_prompt_window_count_and_run_together(
    loop_env: LoopEnv, mock_llm
) -> None:
    """The edit's step is the turn's last (max_steps=1): its one statement closes the run and writes the system
    message, the window and the recompile time with it; the row's message counter matches the rows stored."""
    agent = await loop_env.agent(tools=["memory_insert"])
    async with loop_env.sessionmaker() as session:
        before = await LoopRepository(session).load_state(agent.id, agent.organization_id)
    assert before is not None
    mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes green tea."}))
    outcome = await loop_env.send(agent, "remember this", max_steps=1)
    finished = outcome.events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "max_steps"
    async with loop_env.sessionmaker() as session:
        after = await LoopRepository(session).load_state(agent.id, agent.organization_id)
        stored = await session.get(orm.Agent, agent.id)
        run = await session.get(orm.Run, outcome.run_id)
        counted = await session.scalar(
            select(func.count()).select_from(orm.Message).where(orm.Message.agent_id == agent.id)
        )
    assert after is not None and stored is not None and run is not None
    assert run.status == "completed" and run.stop_reason == "max_steps"
    assert stored.last_stop_reason == "max_steps"
    assert stored.message_count == counted
    text = after.messages[0].content[0]["text"]
    assert "Likes green tea." in text and "Likes green tea." not in before.messages[0].content[0]["text"]
    assert after.messages[0].id == before.messages[0].id  # rewritten in place
    assert after.agent.system_compiled_at > before.agent.system_compiled_at
    assert [m.id for m in after.messages[: len(before.messages)]] == [m.id for m in before.messages]
    assert len(after.messages) == len(before.messages) + 3  # the input, the call, its return


async def test_the_one_read_prompt_of_a_memory_edit_is_the_prompt_separate_reads_compile(
    loop_env: LoopEnv, mock_llm
) -> None:
    """The edit's commit reads the agent, its blocks, its archives' passage count and tags and its folders in one
    statement (`agents.prompt_content`); the prompt it wrote is the one `refresh_system_message` compiles from
    separate reads, with a folder and tagged passages in it."""
    agent = await loop_env.agent(tools=["memory_insert"])
    org = agent.organization_id
    folder_id, archive_id = ids.new_id(ids.Prefix.SOURCE), ids.new_id(ids.Prefix.ARCHIVE)
    async with loop_env.sessionmaker() as session, session.begin():
        session.add(
            orm.Source(
                id=folder_id,
                organization_id=org,
                name="folder-notes-q7",
                description="Meeting notes.",
                instructions="Read them first.",
                embedding_config={"embedding_model": "text-embedding-3-small", "embedding_dim": 1536},
            )
        )
        session.add(orm.Archive(id=archive_id, organization_id=org, name="archive"))
        await session.flush()
        session.add(orm.SourceAgent(agent_id=agent.id, source_id=folder_id))
        session.add(orm.ArchiveAgent(agent_id=agent.id, archive_id=archive_id, is_owner=True))
        for n, tags in enumerate((["tag-alpha", "tag-beta"], ["tag-beta"], [])):
            session.add(
                orm.Passage(
                    id=ids.new_id(ids.Prefix.PASSAGE),
                    organization_id=org,
                    archive_id=archive_id,
                    text=f"p{n}",
                    tags=tags,
                )
            )
    mock_llm.script(
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes oolong."}), Reply.text("ok")
    )
    finished = (await loop_env.send(agent, "remember this")).events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "end_turn"
    async with loop_env.sessionmaker() as session:
        stored = (await LoopRepository(session).load_state(agent.id, org)).messages[0].content[0]["text"]
    async with loop_env.sessionmaker() as session, session.begin():
        fresh = await session.get(orm.Agent, agent.id)
        assert fresh is not None
        compiled = await compile_system_message(session, fresh, update_timestamp=False, with_rules=True)
    assert all(s in stored for s in ("Likes oolong.", "folder-notes-q7", "tag-alpha", "tag-beta"))
    assert stored == compiled
