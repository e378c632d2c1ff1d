"""``POST /v1/agents/{agent_id}/tools/{tool_name}/run`` through letta-client (``agents.tools.run``)."""

import httpx
import pytest
from letta_client import Letta, NotFoundError

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

READ_ENV = '''
import os

def read_env(name: str) -> str:
    """Read an environment variable.

    Args:
        name: The variable name.
    """
    print("reading", name)
    return os.environ.get(name, "missing")
'''

FAILS = '''
def always_fails(x: int) -> int:
    """Fail on purpose.

    Args:
        x: A number.
    """
    raise ValueError("boom")
'''


def system_text(client: Letta, agent_id: str) -> str:
    first = client.agents.messages.list(agent_id, order="asc", limit=1).items[0]
    assert first.message_type == "system_message"
    return str(first.content)


def history_size(client: Letta, agent_id: str) -> int:
    return len(client.agents.messages.list(agent_id, limit=100).items)


def make_agent(client: Letta, **kwargs):  # type: ignore[no-untyped-def]
    return client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[
            {"label": "human", "value": "Name: Sarah", "limit": 60},
            {"label": "persona", "value": "I am fixed.", "read_only": True},
        ],
        **kwargs,
    )


class TestMemoryTools:
    def test_calling_tools_as_letta_sdk_test(self, client: Letta) -> None:
        agent = make_agent(client)
        result = client.agents.tools.run(
            agent_id=agent.id, tool_name="memory_insert", args={"label": "human", "new_string": "test"}
        )
        assert result.status == "success"
        assert result.func_return == "Name: Sarah\ntest"
        assert result.agent_state is None
        block = client.agents.blocks.retrieve("human", agent_id=agent.id)
        assert block.value == "Name: Sarah\ntest"

        bad = client.agents.tools.run(
            agent_id=agent.id, tool_name="memory_insert", args={"label": "human", "FAKE_ARG": "test"}
        )
        assert bad.status == "error"
        assert bad.func_return is None
        assert bad.stderr and "TypeError" in bad.stderr[0]
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Sarah\ntest"

    def test_edit_recompiles_system_message(self, client: Letta) -> None:
        agent = make_agent(client)
        assert "Likes tea" not in system_text(client, agent.id)
        messages = history_size(client, agent.id)
        client.agents.tools.run(
            agent_id=agent.id,
            tool_name="memory_replace",
            args={"label": "human", "old_string": "Sarah", "new_string": "Sarah. Likes tea"},
        )
        assert "Likes tea" in system_text(client, agent.id)
        # Nothing was added to the history: a tool run is not a turn.
        assert history_size(client, agent.id) == messages

    def test_read_only_applies_and_the_limit_does_not(self, client: Letta) -> None:
        agent = make_agent(client)  # human: limit 60
        too_long = client.agents.tools.run(
            agent_id=agent.id, tool_name="memory_insert", args={"label": "human", "new_string": "x" * 100}
        )
        assert too_long.status == "success"  # Letta 0.16.8 keeps the limit as metadata only
        assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Sarah\n" + "x" * 100

        read_only = client.agents.tools.run(
            agent_id=agent.id, tool_name="memory_insert", args={"label": "persona", "new_string": "changed"}
        )
        assert read_only.status == "error"
        assert read_only.func_return is None
        assert client.agents.blocks.retrieve("persona", agent_id=agent.id).value == "I am fixed."

    def test_conversation_search_runs_against_history(self, client: Letta) -> None:
        agent = make_agent(client)
        result = client.agents.tools.run(agent_id=agent.id, tool_name="conversation_search", args={"query": "nope"})
        assert result.status == "success"
        assert result.func_return == {"message": "No results found.", "results": []}

    def test_archival_insert_stores_a_vector_and_search_finds_it(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client, tools=["archival_memory_insert", "archival_memory_search"])
        for text in ("the harbour opens at dawn", "pack the blue umbrella", "invoices are due on Monday"):
            inserted = client.agents.tools.run(
                agent_id=agent.id, tool_name="archival_memory_insert", args={"content": text}
            )
            assert inserted.status == "success", inserted.stderr
        stored = http.get(f"/v1/agents/{agent.id}/archival-memory", params={"include_embedding": True}).json()
        assert {len(p["embedding"] or []) for p in stored} == {1536}
        found = client.agents.tools.run(
            agent_id=agent.id, tool_name="archival_memory_search", args={"query": "umbrella blue", "top_k": 1}
        )
        assert found.status == "success", found.stderr
        assert [r["content"] for r in found.func_return] == ["pack the blue umbrella"]  # type: ignore[union-attr]


class TestCustomTools:
    def test_runs_in_sandbox_with_agent_secrets(self, client: Letta) -> None:
        agent = make_agent(client, secrets={"MY_TOKEN": "t0k3n"})
        tool = client.tools.create(source_code=READ_ENV)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        result = client.agents.tools.run(agent_id=agent.id, tool_name="read_env", args={"name": "MY_TOKEN"})
        assert result.status == "success"
        assert result.func_return == "t0k3n"
        assert result.stdout and "reading MY_TOKEN" in result.stdout[0]

    def test_the_tool_sees_its_agent_tool_and_project_ids(self, client: Letta) -> None:
        agent = make_agent(client, project_id="project-one")
        tool = client.tools.create(source_code=READ_ENV)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        seen = {
            name: client.agents.tools.run(agent_id=agent.id, tool_name="read_env", args={"name": name}).func_return
            for name in ("LETTA_AGENT_ID", "LETTA_TOOL_ID", "LETTA_PROJECT_ID")
        }
        assert seen == {"LETTA_AGENT_ID": agent.id, "LETTA_TOOL_ID": tool.id, "LETTA_PROJECT_ID": "project-one"}

    def test_failing_tool_is_error_with_null_return(self, client: Letta) -> None:
        agent = make_agent(client)
        tool = client.tools.create(source_code=FAILS)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        result = client.agents.tools.run(agent_id=agent.id, tool_name="always_fails", args={"x": 1})
        assert result.status == "error"
        assert result.func_return is None
        assert result.stderr and any("boom" in line for line in result.stderr)


class TestErrors:
    def test_unattached_tool_404(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        client.tools.create(source_code=FAILS)  # exists, but not attached
        with pytest.raises(NotFoundError):
            client.agents.tools.run(agent_id=agent.id, tool_name="always_fails", args={})
        response = http.post(f"/v1/agents/{agent.id}/tools/always_fails/run", json={"args": {}})
        assert response.status_code == 404
        assert response.json() == {"detail": f"Tool 'always_fails' not found or not attached to agent '{agent.id}'"}

    def test_unknown_agent_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.agents.tools.run(
                agent_id="agent-00000000-0000-4000-8000-000000000001", tool_name="memory_insert", args={}
            )

    def test_body_optional(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        response = http.post(f"/v1/agents/{agent.id}/tools/conversation_search/run")
        assert response.status_code == 200
        assert response.json()["status"] == "success"


class TestWebTools:
    def test_fetch_webpage_answers_like_lettas_builtins(self, client: Letta, mock_llm) -> None:
        agent = make_agent(client, tools=["fetch_webpage"])
        url = f"{mock_llm.root_url}/_mock/page.html"
        result = client.agents.tools.run(agent_id=agent.id, tool_name="fetch_webpage", args={"url": url})
        assert result.status == "success"
        assert str(result.func_return).startswith("# A short history of teapots")
        assert (result.stdout, result.stderr) == (None, None)  # Letta's built-ins capture no output streams

    def test_a_failure_is_an_error_with_its_text_in_stderr(self, client: Letta) -> None:
        agent = make_agent(client, tools=["web_search"])
        result = client.agents.tools.run(agent_id=agent.id, tool_name="web_search", args={"query": "teapots"})
        assert (result.status, result.func_return) == ("error", None)
        assert result.stderr and "EXA_API_KEY is not set" in result.stderr[0]
