"""After a memory edit (in the agent's own thread or a conversation), the next step goes on from what the edit's
commit read back (`step_writes.Remembered`, `RunState.remember`) instead of reloading the agent: that state must be
the one a reload would read; the turn's requests keep the system prompt it started with (the stored one shows the
edit)."""

import copy
from typing import Any

import pytest
from sqlalchemy import func, select

from memlet import ids
from memlet.agents.system_message import compile_system_message
from memlet.blocks.repository import BlockRepository
from memlet.conversations.repository import ConversationRepository
from memlet.conversations.system_message import conversation_system_text, refresh_conversation_system_message
from memlet.db import models as orm
from memlet.loop import run_tracker
from memlet.loop.agent_state import LoopRepository, LoopState
from memlet.loop.events import MessagesCommitted, RunFinished
from memlet.loop.runner import RunOptions, run_agent
from memlet.messages.repository import MessageRepository
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
    # The stored prompt is recompiled; the turn's next request still sends the prompt it started with, as
    # Letta's loop does (the provider's prompt cache holds; the next turn reads the recompiled one).
    system = mock_llm.requests[1]["messages"][0]["content"]
    assert system == mock_llm.requests[0]["messages"][0]["content"] != fresh.messages[0].content[0]["text"]


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


def _without_recompile_time(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "System prompt last recompiled" not in line)


async def _conversation_with_its_own_human(loop_env: LoopEnv, agent: orm.Agent) -> tuple[orm.Agent, orm.Conversation]:
    """The agent as stored, and a new conversation of it with an isolated copy of its `human` block and its own
    system message."""
    org = agent.organization_id
    async with loop_env.sessionmaker() as session, session.begin():
        stored_agent = await session.get(orm.Agent, agent.id)
        human = await BlockRepository(session).by_label(agent.id, "human")
        assert stored_agent is not None and human is not None
        isolated = orm.Block(
            id=ids.new_id(ids.Prefix.BLOCK), organization_id=org, label="human", value=human.value, limit=human.limit
        )
        conversation = orm.Conversation(
            id=ids.new_id(ids.Prefix.CONVERSATION), organization_id=org, agent_id=agent.id, message_ids=[]
        )
        session.add_all([isolated, conversation])
        await session.flush()
        await ConversationRepository(session).link_blocks(conversation.id, [isolated])
        await refresh_conversation_system_message(session, stored_agent, conversation)
    return stored_agent, conversation


async def test_a_memory_edit_in_a_conversation_writes_both_prompts_as_separate_reads_compile_them(
    loop_env: LoopEnv, mock_llm
) -> None:
    """A memory edit in a conversation writes the blocks, reads the agent with what its prompt shows and the
    conversation's prompt parts, and rewrites both system messages in the step's one statement: the agent's (the
    shared blocks) and the conversation's (its isolated copy of `human`). Each equals what the separate reads
    compile (`refresh_system_message`, `conversation_system_text`), recall counts included."""
    agent = await loop_env.agent(tools=["memory_insert"])
    org = agent.organization_id
    stored_agent, conversation = await _conversation_with_its_own_human(loop_env, agent)
    mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes oolong."}))
    # The edit's step is the turn's last: the prompts read afterwards are those of the moment of its commit (a later
    # step's rows would join the agent's recall count, which shows every message outside its own window).
    sent = await loop_env.send(agent, "remember this", conversation_id=conversation.id, max_steps=1)
    finished = sent.events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "max_steps"
    async with loop_env.sessionmaker() as session, session.begin():
        fresh = await session.get(orm.Agent, agent.id)
        convo = await ConversationRepository(session).find(org, conversation.id)
        assert fresh is not None and convo is not None and fresh.message_ids and convo.message_ids
        agent_system, convo_system = await MessageRepository(session).by_ids(
            agent.id, [fresh.message_ids[0], convo.message_ids[0]]
        )
        counted = await session.scalar(
            select(func.count()).select_from(orm.Message).where(orm.Message.agent_id == agent.id)
        )
        expected_agent = await compile_system_message(session, fresh, update_timestamp=False, with_rules=True)
        expected_convo = await conversation_system_text(session, fresh, convo)
    stored_agent_text, stored_convo_text = (m.content[0]["text"] for m in (agent_system, convo_system))
    assert fresh.message_count == counted
    assert stored_agent_text == expected_agent
    assert _without_recompile_time(stored_convo_text) == _without_recompile_time(expected_convo)
    assert "Likes oolong." in stored_convo_text and "Likes oolong." not in stored_agent_text  # the isolated copy
    assert f"CONVERSATION_ID: {conversation.id}" in stored_convo_text
    assert fresh.system_compiled_at is not None and fresh.system_compiled_at > stored_agent.system_compiled_at


async def test_the_state_after_a_memory_edit_in_a_conversation_is_the_state_a_reload_reads(
    loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a conversation too, the next step goes on from what the edit's commit read back: the agent row, the
    blocks with the conversation's isolated copy swapped in, the conversation's window and its recompiled system
    message are what a reload reads between the steps, and the next request shows the edit. No reload runs."""
    agent = await loop_env.agent(tools=["memory_insert"])
    org = agent.organization_id
    _, conversation = await _conversation_with_its_own_human(loop_env, agent)
    remembered: list[tuple[Any, ...]] = []
    remember = run_tracker.RunState.remember

    def recording(self: run_tracker.RunState, state: LoopState, *args: Any) -> None:
        remember(self, state, *args)
        assert state.conversation is not None
        snapshot = (_agent(state.agent), _blocks(state), _messages(state), list(state.conversation.message_ids))
        remembered.append(copy.deepcopy(snapshot))

    async def no_reload(self: run_tracker.RunState) -> LoopState:
        raise AssertionError("the state was reloaded")

    monkeypatch.setattr(run_tracker.RunState, "remember", recording)
    monkeypatch.setattr(run_tracker.RunState, "load", no_reload)
    reloaded: list[LoopState] = []
    mock_llm.script(
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes oolong."}), Reply.text("ok")
    )
    events = []
    async for event in run_agent(
        loop_env.deps,
        agent_id=agent.id,
        actor_org_id=org,
        run_id=ids.new_id(ids.Prefix.RUN),
        inputs=[MessageCreate(role="user", content="remember this")],
        options=RunOptions(conversation_id=conversation.id),
    ):
        events.append(event)
        if isinstance(event, MessagesCommitted) and not reloaded:  # between the two steps: what a reload reads
            async with loop_env.sessionmaker() as session:
                fresh = await LoopRepository(session).load_state(agent.id, org, conversation.id)
            assert fresh is not None
            reloaded.append(fresh)
    assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == "end_turn"
    [(agent_row, blocks, messages, window)], [fresh] = remembered, reloaded
    assert fresh.conversation is not None
    assert agent_row == _agent(fresh.agent)
    assert blocks == _blocks(fresh) and any("Likes oolong." in b["value"] for b in blocks)
    assert messages == _messages(fresh) and window == fresh.conversation.message_ids
    system = mock_llm.requests[1]["messages"][0]["content"]
    assert system == mock_llm.requests[0]["messages"][0]["content"] and "Likes oolong." not in system
    assert "Likes oolong." in fresh.messages[0].content[0]["text"]  # stored for the conversation's next turn
