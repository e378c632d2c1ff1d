"""What a blocking send costs Postgres: the SQL statements and round trips (statements plus BEGIN, COMMIT and
ROLLBACK) of a one-step and a two-step turn. The budgets are today's counts: a change that adds a query or a
transaction to the send path fails here and must say why (and lower or raise the number on purpose).

Only the request's own work is counted (`Trace.of_run`).
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import event

from tests.api.sql_tasks import is_cancel_poll, task_name
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "Sam"}],
}
# A step's commit is the agent's xact lock and one statement writing its step row, messages, message_ids and run
# (`runs.step_write`; 11 / 15 before). The turn's load and run insert run in autocommit, without a BEGIN and COMMIT
# around them (12 round trips before). The run's start is part of the load's first statement (8 / 10 before).
# Every budget below is one statement lower for that, as of the same change.
ONE_STEP_STATEMENTS, ONE_STEP_ROUND_TRIPS = 7, 9
# 18 round trips, plus one: the tool runs in tasks its cancel race spawns, and whether one of them ends a session
# (a ROLLBACK) inside the measured window varies from run to run. The second step reads no run status of its own
# (the first step's commit read it moments before), and each step writes in one statement (19 / 26 before).
TWO_STEP_STATEMENTS, TWO_STEP_ROUND_TRIPS = 11, 16
# A memory edit (memory_insert, then a reply): the edit step's commit writes the block and its attachment label in one
# statement, reads the archival count and tags in one, and writes message_ids with system_compiled_at in one UPDATE
# (29 statements / 37 round trips before on main), and the second step reads no run status; plus one round trip of
# slack as above.
# The reply step writes in one statement (`runs.step_write`), and goes on from the state the edit's commit read back
# instead of reloading the agent and its buffer (`step_writes.Remembered`). The edit step's commit: the lock, the block,
# the agent with what its prompt shows (blocks, archival count and tags, folders) in one read, then one statement
# writing the step, the messages, message_ids, the system message and system_compiled_at, and the run (19 / 26
# before; 10 / 12 then). Now with no transaction: one read of the counts the prompt shows, then one statement that
# also writes the block and takes the agent's lock itself (`loop/edit_write.py`): as many as a tool call's turn.
MEMORY_EDIT_STATEMENTS, MEMORY_EDIT_ROUND_TRIPS = 9, 10
# Create agent: the tool lookup, the agent with its blocks and links (one statement of CTEs), the system message;
# between BEGIN and COMMIT.
CREATE_STATEMENTS, CREATE_ROUND_TRIPS = 3, 5
# A one-step send in a conversation (every Letta Code turn): the route's one arrival statement (it touches the
# conversation and reads it, its agent, the agent's type and sleeptime group and the thread's active run), the run
# row (both in autocommit); the load reads the agent with its memory and the conversation with its isolated blocks
# in one statement, then the window; the step's commit is one statement as in the agent's thread
# (`runs.step_write`). 20 statements / 31 round trips before; 13 / 15 with the route's reads in autocommit; 9 / 11
# with them in one statement and the load's agent and conversation in one; plus one of slack.
CONVERSATION_STATEMENTS, CONVERSATION_ROUND_TRIPS = 8, 11
# A memory edit in a conversation, then a reply (Letta Code's memory tool): the edit's commit writes the block, reads
# the agent with what its prompt shows and the conversation's prompt parts, then one statement writes the step, the
# messages, the conversation's window and history links, both system messages and the run; the reply step goes on
# from what the commit read (`step_writes.Remembered`). 39 statements / 49 round trips before; 21 / 26 with the load
# and the route's reads in autocommit; 16 / 21 with the arrival in one statement and each load's agent and
# conversation in one; 13 / 18 without the reply step's reload; plus one.
CONVERSATION_MEMORY_EDIT_STATEMENTS, CONVERSATION_MEMORY_EDIT_ROUND_TRIPS = 13, 19
# A Letta Code turn: a conversation send streamed in the background with token chunks. The one-step conversation
# send's statements, the run row the stream follows, its chunk log's two writes and the reader's read of it; the
# retry check (the request's otids) is part of the arrival statement. A reader whose first read raced the log's first
# write no longer reads again when the writer hands it the batch it already has. Each is one statement in
# autocommit: 18-19 / 28-30 round trips before, 18-19 / 20 with them in autocommit, 10-11 / 13 now.
LETTA_CODE_STATEMENTS, LETTA_CODE_ROUND_TRIPS = 11, 13
# Listing an agent's history with no order (what the SDKs and Letta Code send): the agent's type and its newest rows
# in one statement on the driver (`messages/history_sql.py`; two ORM statements before), in autocommit (no BEGIN and
# COMMIT around it: 2 / 4 before).
LIST_MESSAGES_STATEMENTS, LIST_MESSAGES_ROUND_TRIPS = 1, 1


def _listing(statements: list[str]) -> str:
    return "\n".join(" ".join(sql.split())[:100] for sql in statements)


@dataclass
class Trace:
    """(task name, statement or transaction control) pairs sent while the block ran."""

    statements: list[tuple[str, str]] = field(default_factory=list)
    control: list[tuple[str, str]] = field(default_factory=list)

    def of_request(self) -> tuple[list[str], list[str]]:
        """What a request that starts no run sent: its handler's ("Task-<n>", less the shared cancel poller)."""
        pollers = {task for task, sql in self.statements if is_cancel_poll(sql)}
        statements = [sql for task, sql in self.statements if task.startswith("Task-") and task not in pollers]
        # A task that sent only transaction control in the window (another request's session ending) did none of
        # this request's work.
        working = {task for task, _ in self.statements}
        return statements, [
            sql for task, sql in self.control if task.startswith("Task-") and task not in pollers and task in working
        ]

    def of_run(self, run_id: str) -> tuple[list[str], list[str]]:
        """What the send of `run_id` sent: its request handler ("Task-<n>", less the shared cancel poller, which
        is one too), its turn task ("run <id>"), its chunk log's writes ("chunk write <id>") and a streamed
        response's reader. Named background tasks (the indexer, the run worker) and other runs' tasks (a callback
        still being retried) are not this send's work; nor are the lock's retries while the previous turn releases
        it (that is waiting, 50 ms apart)."""

        pollers = {task for task, sql in self.statements if is_cancel_poll(sql)}

        def ours(task: str, _sql: str) -> bool:
            # The run's chunk-log writes run in tasks named after it; a stream's reader in the response's task.
            return run_id in task or "StreamingResponse" in task or (task.startswith("Task-") and task not in pollers)

        statements, tried = [], False
        for task, sql in self.statements:
            if ours(task, sql) and not (tried and "pg_try_advisory_lock" in sql):
                tried = tried or "pg_try_advisory_lock" in sql
                statements.append(sql)
        working = {task for task, _ in self.statements}
        return statements, [f"{sql} [{task}]" for task, sql in self.control if ours(task, sql) and task in working]


@contextmanager
def recorded(server: LiveServer) -> Iterator[Trace]:
    trace = Trace()
    app: Any = server.server.config.app

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        trace.statements.append((task_name(), statement))

    execute = asyncpg.Connection.execute

    async def counting(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> str:
        trace.control.append((task_name(), query))
        return await execute(self, query, *args, **kwargs)

    engines = [app.state.engine.sync_engine, app.state.turn_engine.sync_engine]
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    asyncpg.Connection.execute = counting  # type: ignore[method-assign]
    try:
        yield trace
    finally:
        asyncpg.Connection.execute = execute  # type: ignore[method-assign]
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def agent_id(http: httpx.Client, mock_llm: MockLLM) -> str:
    mock_llm.reset()  # replies another module scripted and left unused must not answer these sends
    agent = http.post("/v1/agents/", json=AGENT).json()["id"]
    warm = send(http, agent)  # warm-up: first-use work (pools, caches) is not a turn's cost
    assert warm.status_code == 200, warm.text
    return str(agent)


def send(http: httpx.Client, agent_id: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]})


class TestSendSqlBudget:
    def test_create_agent(self, server: LiveServer, http: httpx.Client) -> None:
        # Warm-up (pools, caches) with a create, not a send: a send's background work could land in the window.
        assert http.post("/v1/agents/", json=AGENT).status_code == 200
        with recorded(server) as trace:
            response = http.post("/v1/agents/", json=AGENT)
        assert response.status_code == 200, response.text
        statements, control = trace.of_request()
        assert len(statements) <= CREATE_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= CREATE_ROUND_TRIPS, _listing([*statements, *control])

    def test_list_messages(self, server: LiveServer, http: httpx.Client, agent_id: str) -> None:
        for _ in range(2):  # three turns in all: 7 messages after the system message
            assert send(http, agent_id).status_code == 200
        with recorded(server) as trace:
            response = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 5})
        assert response.status_code == 200, response.text
        assert [m["message_type"] for m in response.json()] == [
            "assistant_message",
            "user_message",
            "assistant_message",
            "user_message",
            "assistant_message",
        ]
        statements, control = trace.of_request()
        assert len(statements) <= LIST_MESSAGES_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= LIST_MESSAGES_ROUND_TRIPS, _listing([*statements, *control])
        print("list messages:", len(statements), "statements,", len(statements) + len(control), "round trips")

    def test_one_step_send(self, server: LiveServer, http: httpx.Client, agent_id: str) -> None:
        with recorded(server) as trace:
            response = send(http, agent_id)
        assert response.json()["usage"]["step_count"] == 1
        statements, control = trace.of_run(response.json()["messages"][0]["run_id"])
        assert len(statements) <= ONE_STEP_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= ONE_STEP_ROUND_TRIPS, _listing([*statements, *control])

    def test_two_step_send(self, server: LiveServer, http: httpx.Client, agent_id: str, mock_llm: MockLLM) -> None:
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("found it"))
        with recorded(server) as trace:
            response = send(http, agent_id)
        assert response.json()["usage"]["step_count"] == 2
        statements, control = trace.of_run(response.json()["messages"][0]["run_id"])
        assert len(statements) <= TWO_STEP_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= TWO_STEP_ROUND_TRIPS, _listing([*statements, *control])

    def test_memory_edit_send(self, server: LiveServer, http: httpx.Client, agent_id: str, mock_llm: MockLLM) -> None:
        edit = Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."})
        mock_llm.script(edit, Reply.text("noted"))
        with recorded(server) as trace:
            response = send(http, agent_id)
        assert response.json()["usage"]["step_count"] == 2
        human = http.get(f"/v1/agents/{agent_id}/core-memory/blocks/human").json()
        assert "Likes tea." in human["value"]
        statements, control = trace.of_run(response.json()["messages"][0]["run_id"])
        assert len(statements) <= MEMORY_EDIT_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= MEMORY_EDIT_ROUND_TRIPS, _listing([*statements, *control])

    def test_one_step_conversation_send(self, server: LiveServer, http: httpx.Client, agent_id: str) -> None:
        conversation = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        path = f"/v1/conversations/{conversation}/messages"
        body = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}
        warm = http.post(path, json=body)
        assert warm.status_code == 200, warm.text
        with recorded(server) as trace:
            response = http.post(path, json=body)
        assert response.status_code == 200, response.text
        statements, control = trace.of_run(response.json()["messages"][0]["run_id"])
        assert len(statements) <= CONVERSATION_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= CONVERSATION_ROUND_TRIPS, _listing([*statements, *control])

    def test_memory_edit_in_a_conversation(
        self, server: LiveServer, http: httpx.Client, agent_id: str, mock_llm: MockLLM
    ) -> None:
        conversation = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        path = f"/v1/conversations/{conversation}/messages"
        body = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}
        assert http.post(path, json=body).status_code == 200  # warm-up
        edit = (Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}), Reply.text("ok"))
        # A memory edit's statements are built the first time they run (a reload's too); building them is slow
        # enough that the next step's run status would be read again (`RunState.cancelled`): warm them up.
        mock_llm.script(*edit)
        assert http.post(path, json=body).status_code == 200
        mock_llm.script(*edit)
        with recorded(server) as trace:
            response = http.post(path, json=body)
        assert response.status_code == 200, response.text
        assert response.json()["usage"]["step_count"] == 2
        assert "Likes tea." in http.get(f"/v1/agents/{agent_id}/core-memory/blocks/human").json()["value"]
        statements, control = trace.of_run(response.json()["messages"][0]["run_id"])
        assert len(statements) <= CONVERSATION_MEMORY_EDIT_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= CONVERSATION_MEMORY_EDIT_ROUND_TRIPS, _listing([*statements, *control])

    def test_letta_code_turn(self, server: LiveServer, http: httpx.Client, agent_id: str) -> None:
        conversation = http.post("/v1/conversations/", params={"agent_id": agent_id}, json={}).json()["id"]
        path = f"/v1/conversations/{conversation}/messages"
        body = {"streaming": True, "stream_tokens": True, "background": True, "include_pings": True}

        def turn(i: int) -> list[dict[str, Any]]:
            message = {"role": "user", "content": "hi", "otid": f"otid-{conversation}-{i}"}
            with http.stream("POST", path, json={**body, "messages": [message]}) as response:
                assert response.status_code == 200, response.read()
                lines = [line for line in response.iter_lines() if line.startswith("data: {")]
            return [json.loads(line.removeprefix("data: ")) for line in lines]

        turn(0)  # warm-up
        with recorded(server) as trace:
            events = turn(1)
        assert [e["message_type"] for e in events][-2:] == ["stop_reason", "usage_statistics"]
        run_id = next(e["run_id"] for e in events if e.get("run_id"))
        statements, control = trace.of_run(run_id)
        assert len(statements) <= LETTA_CODE_STATEMENTS, _listing(statements)
        assert len(statements) + len(control) <= LETTA_CODE_ROUND_TRIPS, _listing([*statements, *control])
