"""A turn that ends normally closes its run in the commit of its last step (one transaction, no close of its own):
the run's status, stop reason and totals and the agent's last stop reason become visible with the step's messages,
so a crash after that commit leaves no run `running`. Failed and cancelled turns still close the run on their own
(real Postgres, mock LLM)."""

from typing import Any

import pytest

from memlet.db import models as orm
from memlet.loop import commit, step_cycle, step_writes
from memlet.loop.cancel import cancel_runs
from memlet.loop.commit import commit_step
from memlet.loop.events import RunFailed, RunFinished
from memlet.loop.run_tracker import RunState
from memlet.messages.requests import MessageCreate
from memlet.runs.repository import RunRepository
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env
from tests.service.loop_rules_support import noop

__all__ = ["loop_env"]


@pytest.fixture
def separate_finishes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stop reasons closed by `RunState.finish`, the run's own closing transaction (still done, and recorded)."""
    seen: list[str] = []
    finish = RunState.finish

    async def recorded(self: RunState, stop_reason: str, error: Exception | None = None) -> Any:
        seen.append(stop_reason)
        return await finish(self, stop_reason, error)

    monkeypatch.setattr(RunState, "finish", recorded)
    return seen


async def _closed(env: LoopEnv, run_id: str, agent_id: str) -> tuple[orm.Run, orm.Agent]:
    run = await env.get(orm.Run, run_id)
    agent = await env.get(orm.Agent, agent_id)
    assert run.completed_at is not None and run.total_duration_ns > 0
    return run, agent


class TestTheLastCommitClosesTheRun:
    async def test_one_step(self, loop_env: LoopEnv, mock_llm, separate_finishes: list[str]) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("hello"))
        out = await loop_env.send(agent, "hi")
        assert isinstance(out.final, RunFinished) and out.final.stop_reason == "end_turn"
        assert out.final.usage["step_count"] == 1
        assert separate_finishes == []
        run, stored = await _closed(loop_env, out.run_id, agent.id)
        assert (run.status, run.stop_reason, run.num_steps) == ("completed", "end_turn", 1)
        assert stored.last_stop_reason == "end_turn"

    async def test_tool_then_reply(self, loop_env: LoopEnv, mock_llm, separate_finishes: list[str]) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("found it"))
        out = await loop_env.send(agent, "search")
        assert out.final.stop_reason == "end_turn" and separate_finishes == []
        run, _ = await _closed(loop_env, out.run_id, agent.id)
        assert (run.status, run.num_steps, run.tools_used) == ("completed", 2, ["conversation_search"])

    async def test_max_steps(self, loop_env: LoopEnv, mock_llm, separate_finishes: list[str]) -> None:
        agent = await loop_env.agent()
        mock_llm.script(*[Reply.tool_call("conversation_search", {"query": "x"}) for _ in range(2)])
        out = await loop_env.send(agent, "search", max_steps=2)
        assert out.final.stop_reason == "max_steps" and separate_finishes == []
        run, stored = await _closed(loop_env, out.run_id, agent.id)
        assert (run.status, run.stop_reason, run.num_steps) == ("completed", "max_steps", 2)
        assert stored.last_stop_reason == "max_steps"

    async def test_memory_edit_then_approval_request(
        self, loop_env: LoopEnv, mock_llm, separate_finishes: list[str]
    ) -> None:
        """The last step's commit takes the memory-edit path (the agent row is reloaded) and stops for approval."""
        agent = await loop_env.agent(custom_tools=[noop("launch", requires_approval=True)])
        mock_llm.script(
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}),
            Reply.tool_call("launch", {}),
        )
        out = await loop_env.send(agent, "remember, then launch")
        assert out.final.stop_reason == "requires_approval" and separate_finishes == []
        run, stored = await _closed(loop_env, out.run_id, agent.id)
        assert (run.status, run.stop_reason) == ("completed", "requires_approval")
        assert stored.last_stop_reason == "requires_approval"

    async def test_a_run_cancelled_during_its_last_step_stays_cancelled(
        self, loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        agent = await loop_env.agent()

        async def cancelled_first(maker: Any, **kwargs: Any) -> Any:
            async with loop_env.sessionmaker() as session, session.begin():
                await cancel_runs(session, agent.id, [kwargs["ctx"].run_id])
            return await commit_step(maker, **kwargs)

        monkeypatch.setattr(step_cycle, "commit_step", cancelled_first)
        mock_llm.script(Reply.text("hello"))
        out = await loop_env.send(agent, "hi")
        run = await loop_env.get(orm.Run, out.run_id)
        assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
        assert [r.role for r in (await loop_env.in_context(agent.id))[-2:]] == ["user", "assistant"]


class TestOtherEndsCloseTheRunOnTheirOwn:
    async def test_an_llm_error(self, loop_env: LoopEnv, mock_llm, separate_finishes: list[str]) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.error(400))  # not retried
        out = await loop_env.send(agent, "hi")
        assert isinstance(out.final, RunFailed) and separate_finishes == ["llm_api_error"]
        run, stored = await _closed(loop_env, out.run_id, agent.id)
        assert run.status == "failed" and stored.last_stop_reason == "llm_api_error"

    async def test_a_commit_that_fails_closes_nothing(
        self, loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch, separate_finishes: list[str]
    ) -> None:
        """The step's rows and the run's end are one transaction: when it fails, neither is written, and the run is
        closed as failed by a transaction of its own."""
        agent = await loop_env.agent()

        record_progress = RunRepository.record_progress

        async def failing(self: RunRepository, run_id: str, **kwargs: Any) -> str | None:
            if kwargs.get("end") is not None:
                raise RuntimeError("the disk is full")
            return await record_progress(self, run_id, **kwargs)

        write_step = step_writes.write_step

        async def failing_write(session: Any, **kwargs: Any) -> Any:
            written = await write_step(session, **kwargs)
            if kwargs.get("end") is not None:  # after the rows were sent: the rollback must undo them
                raise RuntimeError("the disk is full")
            return written

        async def failing_at_its_end(driver: Any, **kwargs: Any) -> Any:
            if kwargs.get("end") is not None:  # the step row's foreign key fails once every other part ran
                kwargs["step"].organization_id = "org-gone"
            return await write_step(driver, **kwargs)

        monkeypatch.setattr(RunRepository, "record_progress", failing)
        monkeypatch.setattr(step_writes, "write_step", failing_write)  # the one statement, in a transaction
        monkeypatch.setattr(commit, "write_step", failing_at_its_end)  # the common path's one statement, alone
        mock_llm.script(Reply.text("hello"))
        out = await loop_env.send(agent, MessageCreate(role="user", content="hi"))
        assert isinstance(out.final, RunFailed) and separate_finishes == ["error"]
        run = await loop_env.get(orm.Run, out.run_id)
        assert (run.status, run.stop_reason) == ("failed", "error")
        assert [r.role for r in await loop_env.in_context(agent.id)] == ["system"]
