"""The AI Memory SDK (letta-ai/ai-memory-sdk, PyPI ``ai-memory-sdk`` 0.2.0) against memlet, call for call.

Each user (subject) is one ``sleeptime_agent`` created directly (``initial_message_sequence=[]``, no embedding),
found again by its tags; standalone blocks are created and attached; ``add_messages`` sends one formatted user
message with ``create_async`` and polls ``runs.retrieve`` until ``completed``; the messages can also be stored as
tagged passages and searched by tag.
"""

import time

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

FORMATTED = "<messages>The following message interactions have occured:\nuser: I love cats</messages>"


def initialize_user_memory(client: Letta, user_id: str) -> str:
    """`Memory.initialize_user_memory(user_id)`."""
    agent = client.agents.create(
        name=f"subconscious_agent_user_{user_id}",
        model="openai/gpt-4o-mini",
        agent_type="sleeptime_agent",
        initial_message_sequence=[],
        tags=[user_id, "ai-memory-sdk"],
    )
    for label, description, limit in [
        ("human", "Details about the human user you are speaking to.", 10000),
        ("summary", "A short (1-2 sentences) running summary of the conversation.", 1000),
    ]:
        block = client.blocks.create(label=label, description=description, limit=limit, value="")
        client.agents.blocks.attach(block.id, agent_id=agent.id)
    client.agents.passages.create(agent.id, text=f"Initialized memory for user {user_id}", tags=["ai-memory-sdk"])
    return agent.id


def wait_for_run(client: Letta, run_id: str) -> str:
    deadline = time.monotonic() + 30
    while (status := client.runs.retrieve(run_id).status) != "completed":
        assert status in ("created", "running"), status
        assert time.monotonic() < deadline, "run did not complete"
        time.sleep(0.1)
    return status


class TestUserMemory:
    def test_the_agent_is_found_by_its_tags_with_its_blocks(self, client: Letta) -> None:
        agent_id = initialize_user_memory(client, "user_sarah")
        initialize_user_memory(client, "user_bob")
        (found,) = client.agents.list(tags=["user_sarah"], match_all_tags=True)
        assert found.id == agent_id
        assert found.agent_type == "sleeptime_agent"
        assert [m.message_type for m in client.agents.messages.list(agent_id).items] == ["system_message"]
        human = client.agents.blocks.retrieve("human", agent_id=agent_id)
        assert (human.value, human.description, human.limit) == (
            "",
            "Details about the human user you are speaking to.",
            10000,
        )

    def test_add_messages_runs_the_agent_and_its_edit_shows_in_the_block(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent_id = initialize_user_memory(client, "user_sarah")
        mock_llm.script(
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "Loves cats."}),
            Reply.tool_call("memory_finish_edits", {}),
        )
        run = client.agents.messages.create_async(agent_id, messages=[{"role": "user", "content": FORMATTED}])
        assert wait_for_run(client, run.id) == "completed"
        assert client.agents.blocks.retrieve("human", agent_id=agent_id).value == "Loves cats."
        (sent, _) = mock_llm.requests
        assert sent["messages"][-1]["content"] == FORMATTED
        assert "Details about the human user you are speaking to." in sent["messages"][0]["content"]

    def test_stored_messages_are_searched_by_tag(self, client: Letta) -> None:
        agent_id = initialize_user_memory(client, "user_sarah")
        client.agents.passages.create(agent_id, text="I love cats", tags=["user", "ai-memory-sdk"])
        client.agents.passages.create(agent_id, text="Cats are great", tags=["assistant", "ai-memory-sdk"])

        def search(**kwargs: object) -> list[str]:
            return sorted(r.content for r in client.agents.passages.search(agent_id, query="cats", **kwargs).results)

        assert search(tags=["user"]) == ["I love cats"]
        assert search(tags=["assistant"]) == ["Cats are great"]
        assert search(tags=["ai-memory-sdk", "user"], tag_match_mode="any") == ["Cats are great", "I love cats"]
        assert search(tags=["ai-memory-sdk", "user"], tag_match_mode="all") == ["I love cats"]

    def test_delete_user(self, client: Letta) -> None:
        agent_id = initialize_user_memory(client, "user_sarah")
        client.agents.delete(agent_id)
        assert list(client.agents.list(tags=["user_sarah"], match_all_tags=True)) == []
