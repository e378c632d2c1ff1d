"""`memory_apply_patch` and the `memory` tool's returns and limits, end to end (issue #11 item 5)."""

from memlet.loop.builtin_tools import NEW_BLOCK_LIMIT
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env
from tests.service.test_loop_memory_tools import agent_with, last_prompt, run_tool, stored_blocks

__all__ = ["loop_env"]


class TestApplyPatch:
    async def test_single_block_diff(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(
            loop_env, "memory_apply_patch", blocks={"human": "Name: Sam\nLikes: tea", "persona": "p"}
        )
        patch = "@@\n Name: Sam\n-Likes: tea\n+Likes: coffee\n+Age: 36"
        result = await run_tool(loop_env, mock_llm, agent, "memory_apply_patch", {"label": "human", "patch": patch})
        assert (result["status"], result["message"]) == ("OK", "Name: Sam\nLikes: coffee\nAge: 36")
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam\nLikes: coffee\nAge: 36"
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Sam\nLikes: coffee\nAge: 36"

    async def test_multi_block_operations(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_apply_patch")
        patch = (
            "*** Update Block: human\n-Name: Sam\n+Name: Ada\n"
            "*** Delete Block: persona\n"
            "*** Add Block: pets\nDescription: The user's pets.\n+Rex\n+Tom\n"
            "*** Move to: animals"
        )
        result = await run_tool(loop_env, mock_llm, agent, "memory_apply_patch", {"label": "", "patch": patch})
        assert result["status"] == "OK"
        assert (
            result["message"].endswith(
                "- Created memory block 'pets'\n- Updated memory block 'human'\n- Deleted memory block 'persona'\n"
                "- Renamed memory block 'pets' to 'animals'"
            )
            or "Renamed memory block 'pets' to 'animals'" in result["message"]
        )
        blocks = await stored_blocks(loop_env, agent.id)
        assert blocks == {"human": ("Name: Ada", "The human block."), "animals": ("Rex\nTom", "The user's pets.")}
        assert set(last_prompt(mock_llm)) == {"human", "animals"}

    async def test_context_not_found_changes_nothing(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_apply_patch")
        args = {"label": "human", "patch": "-Name: Bob\n+Name: Ada"}
        result = await run_tool(loop_env, mock_llm, agent, "memory_apply_patch", args)
        assert result["status"] == "Failed" and "not found" in result["message"]
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam"

    async def test_read_only_and_line_numbers_refused(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory_apply_patch", read_only=["persona"])
        args = {"label": "persona", "patch": "+more"}
        result = await run_tool(loop_env, mock_llm, agent, "memory_apply_patch", args)
        assert result["message"] == "Error This block is read-only and cannot be edited."
        args = {"label": "human", "patch": " 1→ Name: Sam\n+Age: 36"}
        result = await run_tool(loop_env, mock_llm, agent, "memory_apply_patch", args)
        assert result["status"] == "Failed" and "line number prefix" in result["message"]


class TestMemoryToolTexts:
    async def test_returns_are_lettas(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "create", "path": "/memories/pets", "description": "Pets.", "file_text": "Rex"}
        result = await run_tool(loop_env, mock_llm, agent, "memory", args)
        assert result["message"] == (
            "Successfully created memory block 'pets'. Your system prompt has been recompiled with the new memory "
            "block and is now active in your context."
        )
        result = await run_tool(loop_env, mock_llm, agent, "memory", {"command": "delete", "path": "/memories/pets"})
        assert result["message"].startswith("Successfully deleted memory block 'pets'.")

    async def test_created_block_gets_the_default_limit(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory")
        args = {"command": "create", "path": "/memories/notes", "description": "Notes.", "file_text": "x"}
        await run_tool(loop_env, mock_llm, agent, "memory", args)
        async with loop_env.sessionmaker() as session:
            from memlet.loop.agent_state import LoopRepository

            blocks = await LoopRepository(session).blocks.of_agent(agent.id)
        assert next(b for b in blocks if b.label == "notes").limit == NEW_BLOCK_LIMIT == 100000

    async def test_nested_paths_flatten_for_delete(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await agent_with(loop_env, "memory", blocks={"human": "h", "persona": "p", "notes_work": "w"})
        result = await run_tool(
            loop_env, mock_llm, agent, "memory", {"command": "delete", "path": "/memories/notes/work"}
        )
        assert result["status"] == "OK"
        assert "notes_work" not in await stored_blocks(loop_env, agent.id)


NOTE_TAKER = CustomTool(
    name="note_taker",
    source_code=(
        "def note_taker(agent_state, note: str) -> str:\n"
        '    """Append a note to the human block.\n\n    Args:\n        note: the note\n    """\n'
        "    block = agent_state.memory.get_block('human')\n"
        "    agent_state.memory.update_block_value(label='human', value=block.value + '\\n' + note)\n"
        "    return f'{agent_state.name} has {len(agent_state.memory.list_block_labels())} blocks'\n"
    ),
    json_schema=function_schema("note_taker", {"note": {"type": "string"}}, ["note"]),
)


class TestAgentStateTools:
    async def test_tool_reads_the_agent_and_its_memory_edits_are_saved(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[NOTE_TAKER])
        result = await run_tool(loop_env, mock_llm, agent, "note_taker", {"note": "Likes tea."})
        assert (result["status"], result["message"]) == ("OK", "loop-agent has 2 blocks")
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam\nLikes tea."
        assert last_prompt(mock_llm)["human"]["value"] == "Name: Sam\nLikes tea."

    async def test_sandbox_edits_may_pass_the_limit_as_in_letta(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[NOTE_TAKER], block_limit=20)
        result = await run_tool(loop_env, mock_llm, agent, "note_taker", {"note": "A very long note indeed."})
        assert result["status"] == "OK"
        assert (await stored_blocks(loop_env, agent.id))["human"][0] == "Name: Sam\nA very long note indeed."
