"""Turn endings, heartbeats, max_steps and memory edits through the agent loop (real Postgres, mock LLM)."""

import json

from memlet.db import models as orm
from memlet.loop.events import MessagesCommitted, RunFailed, RunFinished
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]


def texts(rows: list[orm.Message]) -> list[str]:
    return ["".join(p.get("text", "") for p in r.content or [] if p.get("type") == "text") for r in rows]


class TestLettaV1Turn:
    async def test_plain_text_ends_turn_and_persists_input_then_reply(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("hello there"))
        out = await loop_env.send(agent, "hi")
        assert isinstance(out.final, RunFinished)
        assert out.final.stop_reason == "end_turn"
        assert [m.role for m in out.messages] == ["assistant"]
        rows = await loop_env.in_context(agent.id)
        assert [r.role for r in rows] == ["system", "user", "assistant"]
        assert texts(rows)[1:] == ["hi", "hello there"]
        run = await loop_env.get(orm.Run, out.run_id)
        assert (run.status, run.stop_reason, run.num_steps) == ("completed", "end_turn", 1)
        assert mock_llm.requests[-1]["tool_choice"] == "auto"

    async def test_tool_call_continues_then_text_ends(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(
            Reply.tool_call("memory_replace", {"label": "human", "old_string": "Sam", "new_string": "Bob"}),
            Reply.text("noted"),
        )
        out = await loop_env.send(agent, "my name is Bob")
        assert out.final.stop_reason == "end_turn"
        assert [m.role for m in out.messages] == ["assistant", "tool", "assistant"]
        blocks = await _blocks(loop_env, agent.id)
        assert blocks["human"] == "Name: Bob"
        # The next prompt's system message shows the edit.
        mock_llm.script(Reply.text("ok"))
        await loop_env.send(agent, "again")
        assert "Name: Bob" in mock_llm.requests[-1]["messages"][0]["content"]
        steps = await _steps(loop_env, out.run_id)
        assert len(steps) == 2 and all(s.status == "success" for s in steps)

    async def test_max_steps(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(*[Reply.tool_call("conversation_search", {"query": "x"}) for _ in range(3)])
        out = await loop_env.send(agent, "search", max_steps=3)
        assert out.final.stop_reason == "max_steps"
        rows = await loop_env.in_context(agent.id)
        calls = [r for r in rows if r.tool_calls]
        returns = [r for r in rows if r.role == "tool"]
        assert len(calls) == len(returns) == 3


class TestMemgptV2Turn:
    async def test_send_message_ends_turn_with_thinking_stored(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "greet", "message": "Hi!"}))
        out = await loop_env.send(agent, "hello")
        assert out.final.stop_reason == "end_turn"
        request = mock_llm.requests[-1]
        assert request["tool_choice"] == "required"
        send = next(t for t in request["tools"] if t["function"]["name"] == "send_message")
        assert send["function"]["parameters"]["required"][0] == "thinking"
        assert "request_heartbeat" not in send["function"]["parameters"]["properties"]
        assistant = out.messages[0]
        assert assistant.content[0].text == "greet"

    async def test_heartbeat_chain_persists_packed_reason(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(
            Reply.tool_call("conversation_search", {"thinking": "look", "query": "x", "request_heartbeat": True}),
            Reply.tool_call("send_message", {"thinking": "done", "message": "found nothing"}),
        )
        out = await loop_env.send(agent, "find x")
        assert out.final.stop_reason == "end_turn"
        roles = [m.role for m in out.messages]
        assert roles == ["assistant", "tool", "user", "assistant", "tool"]
        heartbeat = json.loads(out.messages[2].content[0].text)
        assert heartbeat["type"] == "heartbeat"
        assert heartbeat["reason"].startswith("[This is an automated system message hidden from the user]")
        stored_args = json.loads(out.messages[0].tool_calls[0].function.arguments)
        assert stored_args["request_heartbeat"] is True and "thinking" not in stored_args

    async def test_text_without_tool_fails_no_tool_call(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.text("plain"))
        out = await loop_env.send(agent, "hello")
        assert isinstance(out.final, RunFailed)
        assert out.final.stop_reason == "no_tool_call"
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system"]


class TestProviderErrors:
    async def test_429_then_success(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.error(429, retry_after=0), Reply.text("fine"))
        out = await loop_env.send(agent, "hi")
        assert out.final.stop_reason == "end_turn"

    async def test_500_fails_run_drops_input_and_agent_stays_usable(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.error(500, times=10))
        out = await loop_env.send(agent, "hi")
        assert isinstance(out.final, RunFailed)
        assert out.final.stop_reason == "llm_api_error"
        assert not any(isinstance(e, MessagesCommitted) for e in out.events)
        run = await loop_env.get(orm.Run, out.run_id)
        assert run.status == "failed"
        steps = await _steps(loop_env, out.run_id)
        assert [s.status for s in steps] == ["failed"]
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system"]
        mock_llm.reset()
        mock_llm.script(Reply.text("back"))
        again = await loop_env.send(agent, "hi again")
        assert again.final.stop_reason == "end_turn"
        assert texts(await loop_env.in_context(agent.id))[1:] == ["hi again", "back"]


async def _blocks(env: LoopEnv, agent_id: str) -> dict[str, str]:
    from memlet.loop.agent_state import LoopRepository

    async with env.sessionmaker() as session:
        return {b.label: b.value for b in await LoopRepository(session).blocks.of_agent(agent_id)}


async def _steps(env: LoopEnv, run_id: str) -> list[orm.Step]:
    from sqlalchemy import select

    async with env.sessionmaker() as session:
        return list(await session.scalars(select(orm.Step).where(orm.Step.run_id == run_id)))


class TestCancellationAndContext:
    async def test_cancelled_run_stops_before_the_llm(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        run_id = "run-00000000-0000-4000-8000-00000000c0de"
        async with loop_env.sessionmaker() as session, session.begin():
            session.add(
                orm.Run(id=run_id, agent_id=agent.id, organization_id=agent.organization_id, status="cancelled")
            )
        events = []
        from memlet.loop.runner import RunOptions, run_agent
        from memlet.messages.requests import MessageCreate

        async for event in run_agent(
            loop_env.deps,
            agent_id=agent.id,
            actor_org_id=agent.organization_id,
            run_id=run_id,
            inputs=[MessageCreate(role="user", content="hi")],
            options=RunOptions(),
        ):
            events.append(event)
        assert events[-1].stop_reason == "cancelled"
        assert mock_llm.requests == []
        assert (await loop_env.get(orm.Agent, agent.id)).last_stop_reason == "cancelled"

    async def test_system_message_shows_blocks_and_recall_count(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(blocks={"persona": "I am Ada."})
        system = (await loop_env.in_context(agent.id))[0]
        text = system.content[0]["text"]
        assert "<persona>" in text and "I am Ada." in text
        assert "- 0 previous messages between you and the user are stored in recall memory" in text
        assert f"- AGENT_ID: {agent.id}" in text
