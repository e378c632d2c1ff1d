"""Approvals, tool rules, custom tools, memory limits, compaction and concurrency through the agent loop."""

import asyncio
import json
import os
import time
import uuid

import pytest

from memlet.db import models as orm
from memlet.errors import BadRequestError, PendingApprovalError
from memlet.llm.chat_format import to_openai_messages  # noqa: F401  keeps the import surface checked
from memlet.messages.requests import ApprovalCreate
from memlet.messages.schemas import ApprovalReturn
from tests.mock_llm import Reply
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env
from tests.token_budget import completion_allowance, prompt_tokens

__all__ = ["loop_env"]

ECHO = CustomTool(
    name="echo_env",
    source_code='import os\n\ndef echo_env(key: str) -> str:\n    """Echo.\n\n    Args:\n        key: k\n    """\n'
    "    return str(os.environ.get(key))\n",
    json_schema=function_schema("echo_env", {"key": {"type": "string"}}, ["key"]),
)
BOOM = CustomTool(
    name="boom",
    source_code='def boom() -> str:\n    """Fail."""\n    raise ValueError("kaput")\n',
    json_schema=function_schema("boom", {}),
)
SCAN = CustomTool(
    name="scan_environs",
    source_code=(
        "import os\n\n"
        "def scan_environs(secret: str, pid: int) -> dict:\n"
        '    """Look for a secret in the environment of the server and of every visible process."""\n'
        "    try:\n"
        "        server = 'secret' if secret in open(f'/proc/{pid}/environ').read() else 'readable'\n"
        "    except OSError as exc:\n"
        "        server = type(exc).__name__\n"
        "    holders = []\n"
        "    for entry in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "        try:\n"
        "            if secret in open(f'/proc/{entry}/environ').read():\n"
        "                holders.append(entry)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return {'server': server, 'holders': holders}\n"
    ),
    json_schema=function_schema("scan_environs", {"secret": {"type": "string"}, "pid": {"type": "integer"}}),
)
SLEEPY = CustomTool(
    name="sleepy",
    source_code='import time\n\ndef sleepy() -> str:\n    """Sleep."""\n    time.sleep(30)\n    return "late"\n',
    json_schema=function_schema("sleepy", {}),
)


def tool_texts(rows: list[orm.Message]) -> list[dict]:
    return [json.loads(r.content[0]["text"]) for r in rows if r.role == "tool"]


class TestApprovals:
    async def test_approve_executes_then_continues(self, loop_env: LoopEnv, mock_llm) -> None:
        gated = CustomTool(**{**ECHO.__dict__, "default_requires_approval": True})
        agent = await loop_env.agent(custom_tools=[gated], secrets=[{"key": "TOKEN", "value": "s3"}])
        mock_llm.script(Reply.tool_call("echo_env", {"key": "TOKEN"}, id="call_1"))
        first = await loop_env.send(agent, "use the tool")
        assert first.final.stop_reason == "requires_approval"
        assert [m.role for m in first.messages] == ["approval"]
        with pytest.raises(PendingApprovalError):
            await loop_env.send(agent, "another message")
        mock_llm.script(Reply.text("done"))
        approve = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_1", approve=True)])
        second = await loop_env.send(agent, approve)
        assert second.final.stop_reason == "end_turn"
        assert [m.role for m in second.messages] == ["tool", "assistant"]
        rows = await loop_env.in_context(agent.id)
        assert tool_texts(rows)[-1]["message"] == "s3"

    async def test_deny_returns_error_with_reason(self, loop_env: LoopEnv, mock_llm) -> None:
        gated = CustomTool(**{**ECHO.__dict__, "default_requires_approval": True})
        agent = await loop_env.agent(custom_tools=[gated])
        mock_llm.script(Reply.tool_call("echo_env", {"key": "X"}, id="call_2"))
        await loop_env.send(agent, "go")
        mock_llm.script(Reply.text("ok"))
        deny = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_2", approve=False, reason="no way")])
        await loop_env.send(agent, deny)
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[-1] == {
            "status": "Failed",
            "message": "Error: request to call tool denied. User reason: no way",
            "time": returns[-1]["time"],
        }

    async def test_approval_without_pending_request_is_400(self, loop_env: LoopEnv) -> None:
        agent = await loop_env.agent()
        approve = ApprovalCreate(approvals=[ApprovalReturn(tool_call_id="call_x", approve=True)])
        with pytest.raises(BadRequestError, match="No tool call is currently awaiting approval"):
            await loop_env.send(agent, approve)


class TestCustomTools:
    async def test_success_exception_and_env_isolation(
        self, loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A real secret in the server's (this process') environment: the tool must find it nowhere.
        secret = f"sk-loop-{uuid.uuid4().hex}"
        monkeypatch.setenv("MEMLET_LOOP_SECRET", secret)
        agent = await loop_env.agent(custom_tools=[ECHO, BOOM, SCAN], secrets=[{"key": "TOKEN", "value": "abc"}])
        mock_llm.script(
            Reply.tool_call("echo_env", {"key": "TOKEN"}),
            Reply.tool_call("echo_env", {"key": "MEMLET_LOOP_SECRET"}),
            Reply.tool_call("scan_environs", {"secret": secret, "pid": os.getpid()}),
            Reply.tool_call("boom", {}),
            Reply.text("fin"),
        )
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["message"] == "abc" and returns[0]["status"] == "OK"
        assert returns[1]["message"] == "None"
        assert returns[2]["message"] == {"server": "FileNotFoundError", "holders": []}
        assert returns[3]["status"] == "Failed" and "ValueError: kaput" in returns[3]["message"]

    async def test_timeout_is_error_return(self, loop_env: LoopEnv, mock_llm, settings) -> None:
        server_default = settings.tool_timeout_s
        loop_env.deps.settings = settings.model_copy(update={"tool_timeout_s": 1.0})
        agent = await loop_env.agent(custom_tools=[SLEEPY])
        mock_llm.script(Reply.tool_call("sleepy", {}), Reply.text("ok"))
        started = time.monotonic()
        await loop_env.send(agent, "go")
        # The agent's own timeout (1 s), not the server default (10 s in the tests) nor the tool's 30 s sleep.
        assert time.monotonic() - started < server_default
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["status"] == "Failed"
        assert returns[0]["message"] == (
            "Error executing function sleepy: TimeoutError: Executing tool sleepy timed out after 1.0 seconds."
        )


class TestToolRules:
    async def test_terminal_rule_stops_with_tool_rule(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tool_rules=[{"tool_name": "conversation_search", "type": "exit_loop"}])
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "a"}))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "tool_rule"

    async def test_run_first_forces_the_tool(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tool_rules=[{"tool_name": "conversation_search", "type": "run_first"}])
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "a"}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        first = mock_llm.requests[0]
        assert first["tool_choice"] == {"type": "function", "function": {"name": "conversation_search"}}
        assert mock_llm.requests[1]["tool_choice"] == "auto"

    async def test_disallowed_call_becomes_violation_and_loop_continues(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "conversation_search", "type": "constrain_child_tools", "children": ["memory_insert"]}]
        agent = await loop_env.agent(tool_rules=rules)
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "a"}),
            Reply.tool_call("memory_replace", {"label": "human", "old_string": "Sam", "new_string": "X"}),
            Reply.text("ok"),
        )
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        assert [t["function"]["name"] for t in mock_llm.requests[1]["tools"]] == ["memory_insert"]
        assert mock_llm.requests[1]["tool_choice"] == {"type": "function", "function": {"name": "memory_insert"}}
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[1]["message"].startswith("[ToolConstraintError] Cannot call memory_replace")

    async def test_max_count_removes_tool(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "conversation_search", "type": "max_count_per_step", "max_count_limit": 1}]
        agent = await loop_env.agent(tool_rules=rules)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "a"}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        names = [t["function"]["name"] for t in mock_llm.requests[1]["tools"]]
        assert "conversation_search" not in names

    async def test_required_before_exit_keeps_going(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(tool_rules=[{"tool_name": "conversation_search", "type": "required_before_exit"}])
        mock_llm.script(Reply.text("bye"), Reply.tool_call("conversation_search", {"query": "a"}), Reply.text("ok"))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "end_turn"
        assert len(mock_llm.requests) == 3


class TestMemoryTools:
    async def test_an_edit_past_the_limit_is_kept_as_in_letta(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(block_limit=20)
        mock_llm.script(Reply.tool_call("memory_insert", {"label": "human", "new_string": "x" * 50}), Reply.text("ok"))
        await loop_env.send(agent, "go")
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["status"] == "OK"
        mock_llm.script(Reply.text("ok"))
        await loop_env.send(agent, "and?")  # the next turn's prompt shows the edit
        assert "chars_current=60" in mock_llm.requests[2]["messages"][0]["content"]
        async with loop_env.sessionmaker() as session:
            from memlet.loop.agent_state import LoopRepository

            blocks = {b.label: b.value for b in await LoopRepository(session).blocks.of_agent(agent.id)}
        assert blocks["human"] == "Name: Sam\n" + "x" * 50

    async def test_read_only_block(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(read_only=["human"])
        mock_llm.script(
            Reply.tool_call("memory_replace", {"label": "human", "old_string": "Sam", "new_string": "X"}),
            Reply.text("ok"),
        )
        await loop_env.send(agent, "go")
        returns = tool_texts(await loop_env.in_context(agent.id))
        assert returns[0]["message"] == "Error This block is read-only and cannot be edited."


class TestCompaction:
    async def test_prompts_leave_room_for_the_completion(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(context_window=4000)
        async with loop_env.sessionmaker() as session, session.begin():
            stored = await session.get(orm.Agent, agent.id)
            assert stored is not None
            stored.llm_config = {**stored.llm_config, "max_tokens": 800}
        for i in range(15):
            mock_llm.script(Reply.text(f"reply {i} " + "lorem ipsum " * 40))
            await loop_env.send(agent, f"message {i} " + "dolor sit amet " * 40)
        summaries = [r for r in mock_llm.requests if not r.get("tools")]
        assert summaries, "the buffer outgrew the window, so it was summarized"
        for request in mock_llm.requests:  # counted independently of memlet's own token counter
            allowance = completion_allowance(request)
            assert allowance is not None and allowance >= 256
            assert prompt_tokens(request) + allowance <= 4000
        # Replies keep the agent's whole max_tokens: compaction made room for it.
        assert {completion_allowance(r) for r in mock_llm.requests if r.get("tools")} == {800}
        rows = await loop_env.in_context(agent.id)
        async with loop_env.sessionmaker() as session:
            from memlet.loop.agent_state import LoopRepository

            total = await LoopRepository(session).messages.count_for_agent(agent.id)
        assert len(rows) < total  # evicted rows stay stored
        assert any("hidden from view" in (r.content or [{}])[0].get("text", "") for r in rows[1:2])


class TestConcurrency:
    async def test_twenty_concurrent_sends_are_serialized(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        results = await asyncio.gather(*(loop_env.send(agent, f"question {i}") for i in range(20)))
        assert all(r.final.stop_reason == "end_turn" for r in results)
        rows = (await loop_env.in_context(agent.id))[1:]
        assert len(rows) == 40
        for user, reply in zip(rows[::2], rows[1::2], strict=True):
            assert (user.role, reply.role) == ("user", "assistant")
            assert user.run_id == reply.run_id
