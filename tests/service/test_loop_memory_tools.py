"""Every base memory tool end to end: the block in the database, the compiled prompt the model receives next turn,
and the tool return; failed edits change nothing and hand the error text to the model. Also conversation_search.
"""

import json
import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from memlet.db import models as orm
from memlet.loop.agent_state import LoopRepository
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]


def prompt_blocks(system: str) -> dict[str, dict[str, str]]:
    """{label: {"description", "value"}} of the `<memory_blocks>` section of a compiled system prompt."""
    section = system[system.index("<memory_blocks>") : system.index("</memory_blocks>")]
    found = re.findall(
        r"<([\w-]+)>\n<description>\n(.*?)\n</description>\n<metadata>.*?</metadata>\n<value>\n(.*?)</value>",
        section,
        re.S,
    )
    return {label: {"description": d, "value": v.removesuffix("\n")} for label, d, v in found}


def last_prompt(mock_llm: Any) -> dict[str, dict[str, str]]:
    return prompt_blocks(mock_llm.requests[-1]["messages"][0]["content"])


def tool_returns(rows: list[orm.Message]) -> list[dict[str, Any]]:
    return [json.loads(r.content[0]["text"]) for r in rows if r.role == "tool"]


async def stored_blocks(env: LoopEnv, agent_id: str) -> dict[str, tuple[str, str | None]]:
    async with env.sessionmaker() as session:
        return {b.label: (b.value, b.description) for b in await LoopRepository(session).blocks.of_agent(agent_id)}


async def attachment_labels(env: LoopEnv, agent_id: str) -> list[str]:
    """The label copies on the agent's `blocks_agents` rows, sorted."""
    async with env.sessionmaker() as session:
        rows = await session.scalars(select(orm.BlockAgent.block_label).where(orm.BlockAgent.agent_id == agent_id))
        return sorted(rows)


async def run_tool(env: LoopEnv, mock_llm: Any, agent: orm.Agent, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Have the model call one tool, then answer; then one more turn, whose prompt `last_prompt` reads (a turn
    keeps the system prompt it started with, as Letta's does: an edit shows from the next turn). Returns the
    packed tool return the model saw."""
    mock_llm.script(Reply.tool_call(name, args), Reply.text("ok"))
    out = await env.send(agent, "please")
    assert out.final.stop_reason == "end_turn"
    calling, answering = mock_llm.requests[-2:]
    assert answering["messages"][0] == calling["messages"][0]  # the same system prompt all turn long
    sent = [m for m in answering["messages"] if m["role"] == "tool"][-1]
    returned = tool_returns(await env.in_context(agent.id))[-1]
    assert json.loads(sent["content"]) == returned  # the model read exactly what was stored
    mock_llm.script(Reply.text("noted"))
    await env.send(agent, "thanks")
    return returned


async def agent_with(env: LoopEnv, *tools: str, **kwargs: Any) -> orm.Agent:
    return await env.agent(tools=list(tools), **kwargs)


class TestCoreMemoryTools:
    async def test_core_memory_append(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "core_memory_append")
        result = await run_tool(loop_env, mock_llm, agent, "core_memory_append", {"label": "human", "content": "Tea."})
        assert (result["status"], result["message"]) == ("OK", "Name: Sam\nTea.")
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam\nTea."
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Sam\nTea."

    async def test_core_memory_replace_replaces_every_occurrence(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "core_memory_replace", blocks={"human": "cat, cat, dog"})
        args = {"label": "human", "old_content": "cat", "new_content": "cow"}
        result = await run_tool(loop_env, mock_llm, agent, "core_memory_replace", args)
        assert result["message"] == "cow, cow, dog"
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "cow, cow, dog"
        assert last_prompt(mock_llm)["human"]["value"] == "cow, cow, dog"

    async def test_core_memory_replace_missing_text_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "core_memory_replace")
        args = {"label": "human", "old_content": "Bob", "new_content": "Al"}
        result = await run_tool(loop_env, mock_llm, agent, "core_memory_replace", args)
        assert (result["status"], result["message"]) == (
            "Failed",
            "Old content 'Bob' not found in memory block 'human'",
        )
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam"
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Sam"

    async def test_unknown_label_lists_the_available_ones(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "core_memory_append")
        result = await run_tool(loop_env, mock_llm, agent, "core_memory_append", {"label": "pets", "content": "x"})
        assert result["message"] == "Block field pets does not exist (available sections = persona, human)"


class TestLabelledMemoryTools:
    async def test_memory_insert_top_and_end(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_insert")
        await run_tool(
            loop_env, mock_llm, agent, "memory_insert", {"label": "human", "new_string": "Hi", "insert_line": 0}
        )
        result = await run_tool(loop_env, mock_llm, agent, "memory_insert", {"label": "human", "new_string": "Bye"})
        assert result["message"] == "Hi\nName: Sam\nBye"
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Hi\nName: Sam\nBye"
        assert last_prompt(mock_llm)["human"]["value"] == "Hi\nName: Sam\nBye"

    async def test_memory_insert_out_of_range_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_insert")
        args = {"label": "human", "new_string": "x", "insert_line": 5}
        result = await run_tool(loop_env, mock_llm, agent, "memory_insert", args)
        assert result["status"] == "Failed"
        assert result["message"].startswith("Invalid `insert_line` parameter: 5.")
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam"

    async def test_memory_replace(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_replace")
        args = {"label": "human", "old_string": "Sam", "new_string": "Ada"}
        result = await run_tool(loop_env, mock_llm, agent, "memory_replace", args)
        assert result["message"] == "Name: Ada"
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Ada"

    async def test_memory_replace_ambiguous_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_replace", blocks={"human": "a\nb\na"})
        args = {"label": "human", "old_string": "a", "new_string": "c"}
        result = await run_tool(loop_env, mock_llm, agent, "memory_replace", args)
        assert result["message"] == (
            "No replacement was performed. Multiple occurrences of old_string `a` in lines [1, 3]. "
            "Please ensure it is unique."
        )
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "a\nb\na"
        assert last_prompt(mock_llm)["human"]["value"] == "a\nb\na"

    async def test_memory_rethink_replaces_the_whole_value(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_rethink")
        args = {"label": "persona", "new_memory": "I am terse."}
        result = await run_tool(loop_env, mock_llm, agent, "memory_rethink", args)
        assert result["message"] == "I am terse."
        assert (await stored_blocks(loop_env, agent.id))["persona"][0] == "I am terse."
        assert last_prompt(mock_llm)["persona"]["value"] == "I am terse."

    async def test_memory_finish_edits_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_finish_edits")
        before = (await loop_env.in_context(agent.id))[0].content[0]["text"]
        result = await run_tool(loop_env, mock_llm, agent, "memory_finish_edits", {})
        assert (result["status"], result["message"]) == ("OK", "None")
        assert mock_llm.requests[-1]["messages"][0]["content"] == before  # prompt not even recompiled


class TestOmniMemoryTool:
    async def test_create_attaches_a_new_block(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "create", "path": "/memories/pets", "description": "The user's pets.", "file_text": "Rex"}
        result = await run_tool(loop_env, mock_llm, agent, "memory", args)
        assert result["status"] == "OK"
        assert (await stored_blocks(loop_env, agent.id))["pets"] == ("Rex", "The user's pets.")
        assert last_prompt(mock_llm)["pets"] == {"description": "The user's pets.", "value": "Rex"}

    async def test_create_existing_label_fails(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "create", "path": "/memories/human", "description": "dup"}
        result = await run_tool(loop_env, mock_llm, agent, "memory", args)
        assert (result["status"], result["message"]) == ("Failed", "Error: Memory block 'human' already exists")
        assert len(await stored_blocks(loop_env, agent.id)) == 2

    async def test_str_replace_and_insert(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "str_replace", "path": "/memories/human", "old_string": "Sam", "new_string": "Ada"}
        await run_tool(loop_env, mock_llm, agent, "memory", args)
        args = {"command": "insert", "path": "/memories/human", "insert_text": "Age: 36", "insert_line": 1}
        result = await run_tool(loop_env, mock_llm, agent, "memory", args)
        assert result["message"] == "Name: Ada\nAge: 36"
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Ada\nAge: 36"

    async def test_delete_detaches_the_block(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        result = await run_tool(loop_env, mock_llm, agent, "memory", {"command": "delete", "path": "/memories/human"})
        assert result["status"] == "OK"
        assert list(await stored_blocks(loop_env, agent.id)) == ["persona"]
        assert list(last_prompt(mock_llm)) == ["persona"]

    async def test_rename_and_describe(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "rename", "old_path": "/memories/human", "new_path": "/memories/user"}
        await run_tool(loop_env, mock_llm, agent, "memory", args)
        args = {"command": "rename", "path": "/memories/user", "description": "Who I talk to."}
        await run_tool(loop_env, mock_llm, agent, "memory", args)
        assert (await stored_blocks(loop_env, agent.id))["user"] == ("Name: Sam", "Who I talk to.")
        assert last_prompt(mock_llm)["user"] == {"description": "Who I talk to.", "value": "Name: Sam"}
        assert "human" not in last_prompt(mock_llm)
        assert await attachment_labels(loop_env, agent.id) == ["persona", "user"]  # the copy follows the rename

    async def test_edit_keeps_the_attachment_label(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_insert")
        await run_tool(loop_env, mock_llm, agent, "memory_insert", {"label": "human", "new_string": "Likes tea."})
        assert "Likes tea." in (await stored_blocks(loop_env, agent.id))["human"][0]
        assert await attachment_labels(loop_env, agent.id) == ["human", "persona"]

    async def test_missing_path_fails_without_changes(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        result = await run_tool(loop_env, mock_llm, agent, "memory", {"command": "delete", "path": "/memories/pets"})
        assert (result["status"], result["message"]) == ("Failed", "Error: Memory block 'pets' does not exist")
        edit = {"command": "str_replace", "path": "/memories/pets", "old_string": "a", "new_string": "b"}
        result = await run_tool(loop_env, mock_llm, agent, "memory", edit)
        assert result["message"] == "Block field pets does not exist (available sections = persona, human)"
        result = await run_tool(loop_env, mock_llm, agent, "memory", {"command": "explode"})
        assert result["message"].startswith("Error: Unknown command 'explode'.")
        assert list(await stored_blocks(loop_env, agent.id)) == ["persona", "human"]


class TestConversationSearch:
    async def _history(self, env: LoopEnv, mock_llm: Any, agent: orm.Agent) -> None:
        for question, answer in (("I love green tea", "Noted: green tea"), ("My cat is Rex", "Rex is a fine name")):
            mock_llm.script(Reply.text(answer))
            await env.send(agent, question)

    async def _search(self, env: LoopEnv, mock_llm: Any, agent: orm.Agent, **args: Any) -> dict[str, Any]:
        result = await run_tool(env, mock_llm, agent, "conversation_search", args)
        assert result["status"] == "OK"
        return result["message"]  # an object, not a JSON string, as in Letta

    async def test_query_matches_text_newest_first_in_lettas_shape(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "conversation_search")
        await self._history(loop_env, mock_llm, agent)
        found = await self._search(loop_env, mock_llm, agent, query="GREEN tea")
        assert found["message"] == "Showing 2 results:"
        assert [(r["role"], r["content"]) for r in found["results"]] == [
            ("assistant", "Noted: green tea"),
            ("user", "I love green tea"),
        ]
        first = found["results"][0]
        assert set(first) == {"timestamp", "time_ago", "role", "relevance", "content"}
        # How each result ranked, as Letta's tool reports it (this agent has no vectors: the text ranking alone).
        assert first["relevance"]["search_mode"] == "fts" and first["relevance"]["fts_rank"] == 1
        assert found["results"][1]["relevance"]["fts_rank"] == 2
        assert re.fullmatch(r"\d+s ago", first["time_ago"])
        assert datetime.fromisoformat(first["timestamp"]).utcoffset() is not None

    async def test_roles_and_limit(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "conversation_search")
        await self._history(loop_env, mock_llm, agent)
        found = await self._search(loop_env, mock_llm, agent, roles=["user"], limit=1)
        assert [(r["role"], r["content"]) for r in found["results"]] == [("user", "My cat is Rex")]
        found = await self._search(loop_env, mock_llm, agent, roles=["tool"])
        assert found == {"message": "No results found.", "results": []}

    async def test_excludes_tool_returns_and_its_own_calls(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "conversation_search")
        await self._history(loop_env, mock_llm, agent)
        await self._search(loop_env, mock_llm, agent, query="Rex")
        # The first search's call (its query) and its return (holding "Rex" twice) must not be found again.
        found = await self._search(loop_env, mock_llm, agent, query="Rex")
        assert [r["content"] for r in found["results"]] == ["Rex is a fine name", "My cat is Rex"]

    async def test_date_range_in_the_agents_timezone(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "conversation_search")
        await self._history(loop_env, mock_llm, agent)
        rows = await loop_env.in_context(agent.id)
        old = [r.id for r in rows if r.role in ("user", "assistant")][:2]  # the green tea exchange
        async with loop_env.sessionmaker() as session, session.begin():
            await session.execute(
                update(orm.Message)
                .where(orm.Message.id.in_(old))
                .values(created_at=datetime(2024, 3, 5, 10, 0, tzinfo=UTC))
            )
        found = await self._search(loop_env, mock_llm, agent, start_date="2024-03-05", end_date="2024-03-05")
        assert [r["content"] for r in found["results"]] == ["Noted: green tea", "I love green tea"]
        assert found["results"][0]["timestamp"] == "2024-03-05T10:00:00+00:00"
        assert re.fullmatch(r"\d+d ago", found["results"][0]["time_ago"])
        found = await self._search(loop_env, mock_llm, agent, start_date="2024-03-05T11:00", end_date="2024-03-06")
        assert found == {"message": "No results found.", "results": []}
        later = await self._search(loop_env, mock_llm, agent, start_date="2024-03-06", query="Rex")
        assert [r["content"] for r in later["results"]] == ["Rex is a fine name", "My cat is Rex"]

    async def test_bad_date_is_an_error_return(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "conversation_search")
        result = await run_tool(loop_env, mock_llm, agent, "conversation_search", {"start_date": "last week"})
        assert result["status"] == "Failed" and "Invalid start_date format: last week." in result["message"]

    async def test_v2_send_message_hits_show_message_and_thinking(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "be kind", "message": "Hello Sam"}))
        await loop_env.send(agent, "hi")
        mock_llm.script(
            Reply.tool_call("conversation_search", {"thinking": "look", "query": "Hello", "request_heartbeat": True}),
            Reply.tool_call("send_message", {"thinking": "done", "message": "found it"}),
        )
        await loop_env.send(agent, "what did you say?")
        returned = tool_returns(await loop_env.in_context(agent.id))
        found = next(r["message"] for r in returned if isinstance(r["message"], dict))
        assert [(r["role"], r.get("thinking"), r["content"]) for r in found["results"]] == [
            ("assistant", "be kind", "Hello Sam")
        ]


class TestArchivalTools:
    async def test_insert_then_search_and_prompt_metadata(self, loop_env: LoopEnv, mock_llm) -> None:
        embedding = {
            "embedding_endpoint_type": "openai",
            "embedding_endpoint": mock_llm.base_url,
            "embedding_model": "text-embedding-3-small",
            "embedding_dim": 1536,
        }
        agent = await agent_with(
            loop_env, "archival_memory_insert", "archival_memory_search", embedding_config=embedding
        )
        inserted = await run_tool(
            loop_env,
            mock_llm,
            agent,
            "archival_memory_insert",
            {"content": "Sam's dog is called Rex", "tags": ["pets"]},
        )
        assert (inserted["status"], inserted["message"]) == ("OK", "None")
        system = mock_llm.requests[-1]["messages"][0]["content"]
        assert "1 total memories you created are stored in archival memory" in system
        assert "Available archival memory tags: pets" in system
        await run_tool(loop_env, mock_llm, agent, "archival_memory_insert", {"content": "The sky was grey on Monday"})
        found = await run_tool(
            loop_env, mock_llm, agent, "archival_memory_search", {"query": "what is the dog called", "top_k": 1}
        )
        assert found["status"] == "OK"
        assert "Sam's dog is called Rex" in str(found["message"]) and "grey" not in str(found["message"])
