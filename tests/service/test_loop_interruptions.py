"""Cancellation and malformed LLM output through the agent loop (real Postgres, mock LLM)."""

import asyncio
import json
from typing import Any

from sqlalchemy import update

from memlet import ids
from memlet.db import models as orm
from memlet.loop.cancel import CANCEL_DENIAL_REASON, cancel_runs
from memlet.loop.events import MessagesCommitted, RunFailed, RunFinished
from memlet.loop.run_tracker import STATUS_CURRENT_S
from memlet.loop.runner import RunOptions, run_agent
from memlet.messages.requests import MessageCreate
from tests.mock_llm import Call, Reply
from tests.service.loop_factories import LoopEnv, loop_env
from tests.service.loop_rules_support import PARALLEL, blocks_of, noop, tool_texts

__all__ = ["loop_env"]


async def _collect(env: LoopEnv, agent: orm.Agent, run_id: str, text: str, on_commit=None) -> list[Any]:
    events: list[Any] = []
    async for event in run_agent(
        env.deps,
        agent_id=agent.id,
        actor_org_id=agent.organization_id,
        run_id=run_id,
        inputs=[MessageCreate(role="user", content=text)],
        options=RunOptions(),
    ):
        events.append(event)
        if on_commit is not None and isinstance(event, MessagesCommitted):
            await on_commit()
            on_commit = None
    return events


class TestCancellation:
    async def test_a_cancel_from_another_process_between_steps_stops_the_next_step(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        """A cancel written by another process (no in-process signal) while the first step's messages were being
        delivered: the step boundary reads the run again when its commit's read is no longer current."""
        agent = await loop_env.agent()
        run_id = ids.new_id(ids.Prefix.RUN)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "x"}), Reply.text("never asked"))

        async def cancel_elsewhere() -> None:
            async with loop_env.sessionmaker() as session, session.begin():
                await session.execute(update(orm.Run).where(orm.Run.id == run_id).values(status="cancelled"))
            await asyncio.sleep(STATUS_CURRENT_S * 2)  # a slow stream reader

        events = await _collect(loop_env, agent, run_id, "search", on_commit=cancel_elsewhere)
        assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == "cancelled"
        assert len(mock_llm.requests) == 1

    async def test_cancel_mid_run_stops_at_next_step_and_agent_stays_usable(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        run_id = ids.new_id(ids.Prefix.RUN)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "x"}), Reply.text("never asked"))

        async def cancel() -> None:
            async with loop_env.sessionmaker() as session, session.begin():
                assert await cancel_runs(session, agent.id, [run_id]) == {run_id: "cancelled"}

        events = await _collect(loop_env, agent, run_id, "search", on_commit=cancel)
        assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == "cancelled"
        assert len(mock_llm.requests) == 1
        run = await loop_env.get(orm.Run, run_id)
        assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
        assert (await loop_env.get(orm.Agent, agent.id)).last_stop_reason == "cancelled"
        mock_llm.reset()
        mock_llm.script(Reply.text("back"))
        again = await loop_env.send(agent, "hello")
        assert again.final.stop_reason == "end_turn"

    async def test_unknown_or_foreign_run_is_failed(self, loop_env: LoopEnv) -> None:
        agent = await loop_env.agent()
        async with loop_env.sessionmaker() as session, session.begin():
            result = await cancel_runs(session, agent.id, ["run-00000000-0000-4000-8000-000000000000"])
        assert result == {"run-00000000-0000-4000-8000-000000000000": "failed"}

    async def test_cancelling_a_pending_approval_denies_every_pending_call(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(llm=PARALLEL, custom_tools=[noop("launch", requires_approval=True)])
        mock_llm.script(
            Reply.tool_calls(Call("conversation_search", {"query": "x"}, id="call_u"), Call("launch", {}, id="call_g"))
        )
        first = await loop_env.send(agent, "launch it")
        assert first.final.stop_reason == "requires_approval"
        async with loop_env.sessionmaker() as session, session.begin():
            assert await cancel_runs(session, agent.id, [first.run_id]) == {first.run_id: "cancelled"}
        rows = await loop_env.in_context(agent.id)
        # As Letta stores a cancel's denials: the approval response, then one tool row with a return per call.
        assert [r.role for r in rows[-3:]] == ["approval", "approval", "tool"]
        response, denied = rows[-2:]
        assert response.approvals == [
            {"type": "approval", "tool_call_id": "call_g", "approve": False, "reason": CANCEL_DENIAL_REASON}
        ]
        denial = f"Error: request to call tool denied. User reason: {CANCEL_DENIAL_REASON}"
        returns = [json.loads(part["text"]) for part in denied.content]
        assert [(r["status"], r["message"]) for r in returns] == [("Failed", denial), ("Failed", denial)]
        assert [r["tool_call_id"] for r in denied.tool_returns] == ["call_g", "call_u"]
        run = await loop_env.get(orm.Run, first.run_id)
        assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
        mock_llm.script(Reply.text("ok"))
        again = await loop_env.send(agent, "never mind")  # no PendingApprovalError any more
        assert again.final.stop_reason == "end_turn"

    async def test_cancelling_a_finished_run_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("hi"))
        out = await loop_env.send(agent, "hello")
        async with loop_env.sessionmaker() as session, session.begin():
            assert await cancel_runs(session, agent.id, [out.run_id]) == {out.run_id: "cancelled"}
        run = await loop_env.get(orm.Run, out.run_id)
        assert (run.status, run.stop_reason) == ("completed", "end_turn")


class TestMalformedOutput:
    async def test_invalid_json_arguments_become_an_error_return(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.tool_call("memory_insert", '{"label": "human", '), Reply.text("sorry"))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns == [
            {
                "status": "Failed",
                "message": "Error: the arguments of memory_insert are not a valid JSON object.",
                "time": returns[0]["time"],
            }
        ]
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam"
        assert mock_llm.requests[1]["messages"][-1]["role"] == "tool"

    async def test_run_together_or_twice_encoded_arguments_are_read_as_letta_reads_them(
        self, loop_env: LoopEnv, mock_llm
    ) -> None:
        agent = await loop_env.agent()
        first = json.dumps({"label": "human", "new_string": "Writes \\frac{a}{b}."})  # "}{" inside a value
        twice = json.dumps(json.dumps({"label": "human", "new_string": "Likes tea."}))
        mock_llm.script(
            Reply.tool_call("memory_insert", first + '{"label": "human", "new_string": "never"}'),
            Reply.tool_call("memory_insert", twice),
            Reply.text("done"),
        )
        await loop_env.send(agent, "go")
        assert (await blocks_of(loop_env, agent.id))["human"] == "Name: Sam\nWrites \\frac{a}{b}.\nLikes tea."

    async def test_unknown_tool_becomes_an_error_return(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.tool_call("launch_rockets", {"count": 3}), Reply.text("cannot"))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["status"] == "Failed"
        assert returns[0]["message"].startswith(
            "[ToolConstraintError] Cannot call launch_rockets, valid tools include: "
            "['conversation_search', 'memory_insert', 'memory_replace']."
        )

    async def test_empty_streamed_response_ends_turn_storing_only_the_input(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.empty())
        out = await loop_env.send(agent, "hi", stream_tokens=True)
        assert isinstance(out.final, RunFinished) and out.final.stop_reason == "end_turn"
        assert out.messages == []
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system", "user"]

    async def test_empty_unstreamed_response_is_invalid_llm_response(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.empty())
        out = await loop_env.send(agent, "hi")
        assert isinstance(out.final, RunFailed) and out.final.stop_reason == "invalid_llm_response"
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system"]

    async def test_empty_text_ends_turn_storing_nothing_but_the_input(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text(""))
        out = await loop_env.send(agent, "hi")
        assert out.final.stop_reason == "end_turn" and out.messages == []
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system", "user"]
