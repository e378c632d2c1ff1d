"""Issue #10 item 3: agents calling MCP tools in a turn (the mock LLM scripts the call), by server id, under the
MCP deadlines; deleting a server takes its tools off the agents."""

import json
import time

from letta_client import Letta

from tests.api.mcp_fixtures import CALL_TIMEOUT_S, DEMO_TOOLS, HttpDemo, http_demo, mcp_client, mcp_server, stdio_config
from tests.mock_llm import MockLLM, Reply

__all__ = ["http_demo", "mcp_client", "mcp_server"]
MODEL = "openai/gpt-4o-mini"


def _tool_ids(client: Letta, server_id: str) -> dict[str, str]:
    return {t.name: t.id for t in client.mcp_servers.tools.list(server_id)}


def _returns(response: object) -> list[object]:
    return [m for m in response.messages if m.message_type == "tool_return_message"]  # type: ignore[attr-defined]


def _http(demo: HttpDemo) -> dict[str, str]:
    """The streamable-HTTP demo server (already running: no process start per connection, unlike stdio)."""
    return {"mcp_server_type": "streamable_http", "server_url": demo.streamable_http}


def _send(client: Letta, agent_id: str, text: str) -> list[object]:
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])
    return _returns(response)


class TestAgentTurns:
    def test_the_loop_runs_an_mcp_tool_and_a_rename_does_not_break_it(
        self, mcp_client: Letta, mock_llm: MockLLM
    ) -> None:
        server = mcp_client.mcp_servers.create(server_name="demo", config=stdio_config())
        tools = _tool_ids(mcp_client, server.id)
        agent = mcp_client.agents.create(name="mcp-user", model=MODEL, tool_ids=[tools["echo"], tools["create_person"]])
        mock_llm.reset()
        person = {"person": {"name": "Ada", "age": 36, "address": {"street": "1 Loop", "city": "London"}}}
        mock_llm.script(
            Reply.tool_call("echo", {"message": "hello"}), Reply.tool_call("create_person", person), Reply.text("done")
        )
        first, second = _send(mcp_client, agent.id, "go")
        assert first.status == "success" and "Echo: hello" in first.tool_return  # type: ignore[attr-defined]
        assert "Created Ada (36) in London" in second.tool_return  # type: ignore[attr-defined]
        sent = [t["function"]["name"] for t in mock_llm.requests[0]["tools"]]
        assert {"echo", "create_person"} <= set(sent)

        mcp_client.mcp_servers.update(server.id, server_name="renamed", config={"mcp_server_type": "stdio"})
        assert mcp_client.mcp_servers.retrieve(server.id).server_name == "renamed"
        # A new server takes the old name (one without tools): Letta, finding servers by name, would call it.
        mcp_client.mcp_servers.create(server_name="demo", config=stdio_config("--no-tools"))
        mock_llm.script(Reply.tool_call("echo", {"message": "again"}), Reply.text("done"))
        (after,) = _send(mcp_client, agent.id, "again")
        assert after.status == "success" and "Echo: again" in after.tool_return  # type: ignore[attr-defined]

    def test_headers_are_filled_from_the_agent_secrets(
        self, mcp_client: Letta, mock_llm: MockLLM, http_demo: HttpDemo
    ) -> None:
        config = {
            **_http(http_demo),
            "auth_token": "{{ MCP_TOKEN }}",
            "custom_headers": {"X-Tenant": "{{ TENANT | acme }}", "X-Other": "{{ UNSET }}"},
        }
        server = mcp_client.mcp_servers.create(server_name="templated", config=config)
        whoami = _tool_ids(mcp_client, server.id)["whoami"]
        agent = mcp_client.agents.create(
            name="tenant", model=MODEL, tool_ids=[whoami], secrets={"MCP_TOKEN": "agent-tok"}
        )
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("whoami", {}), Reply.text("ok"))
        (result,) = _send(mcp_client, agent.id, "who")
        seen = json.loads(result.tool_return)  # type: ignore[attr-defined]
        assert seen["authorization"] == "Bearer agent-tok" and seen["x-tenant"] == "acme"
        assert seen["x-other"] == "{{ UNSET }}" and seen["x-agent-id"] == agent.id

    def test_a_hung_server_fails_the_call_not_the_step(
        self, mcp_client: Letta, mock_llm: MockLLM, http_demo: HttpDemo
    ) -> None:
        server = mcp_client.mcp_servers.create(server_name="slow", config=_http(http_demo))
        agent = mcp_client.agents.create(
            name="waiter", model=MODEL, tool_ids=[_tool_ids(mcp_client, server.id)["slow_tool"]]
        )
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("slow_tool", {"seconds": 120}), Reply.text("gave up"))
        started = time.monotonic()
        (result,) = _send(mcp_client, agent.id, "wait")
        assert time.monotonic() - started < CALL_TIMEOUT_S + 15
        assert result.status == "error"  # type: ignore[attr-defined]
        assert "MCPTimeoutError" in result.tool_return and "did not answer" in result.tool_return  # type: ignore[attr-defined]

    def test_the_model_reads_the_error_the_server_answered(
        self, mcp_client: Letta, mock_llm: MockLLM, http_demo: HttpDemo
    ) -> None:
        server = mcp_client.mcp_servers.create(server_name="refusing", config=_http(http_demo))
        agent = mcp_client.agents.create(
            name="refused", model=MODEL, tool_ids=[_tool_ids(mcp_client, server.id)["refuse"]]
        )
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("refuse", {"reason": "quota"}), Reply.text("ok"))
        (result,) = _send(mcp_client, agent.id, "try")
        assert result.status == "error" and "refused: quota" in result.tool_return  # type: ignore[attr-defined]
        assert "connect" not in result.tool_return  # type: ignore[attr-defined]

    def test_a_deleted_server_takes_its_tools_off_the_agent(
        self, mcp_client: Letta, mock_llm: MockLLM, http_demo: HttpDemo
    ) -> None:
        keep = mcp_client.mcp_servers.create(server_name="keep", config=_http(http_demo))
        gone = mcp_client.mcp_servers.create(server_name="gone", config=_http(http_demo))
        kept, dropped = _tool_ids(mcp_client, keep.id), _tool_ids(mcp_client, gone.id)
        assert len(kept) == len(dropped) == len(DEMO_TOOLS) + 3  # with --extras: read_env, whoami, refuse
        agent = mcp_client.agents.create(name="both", model=MODEL, tool_ids=[*kept.values(), *dropped.values()])
        before = len(mcp_client.agents.tools.list(agent.id, limit=100).items)
        mcp_client.mcp_servers.delete(gone.id)
        after = {t.name for t in mcp_client.agents.tools.list(agent.id, limit=100).items}
        assert len(after) == before - len(dropped) and set(kept) <= after
        assert not set(dropped) & after
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("add", {"a": 1, "b": 1}), Reply.text("ok"))
        (result,) = _send(mcp_client, agent.id, "add")
        assert "Result: 2" in result.tool_return  # type: ignore[attr-defined]

    def test_a_tool_whose_server_is_gone_fails_clearly(
        self, mcp_client: Letta, mock_llm: MockLLM, http_demo: HttpDemo
    ) -> None:
        server = mcp_client.mcp_servers.create(server_name="off", config=_http(http_demo))
        tool = mcp_client.tools.retrieve(_tool_ids(mcp_client, server.id)["echo"])
        agent = mcp_client.agents.create(name="orphan", model=MODEL, tool_ids=[tool.id])
        # A tool row that names a server id which no longer exists (e.g. imported from an agent file).
        mcp_client.tools.update(tool.id, metadata={"mcp": {**tool.metadata["mcp"], "server_id": "mcp_server-gone"}})
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("echo", {"message": "x"}), Reply.text("ok"))
        (result,) = _send(mcp_client, agent.id, "x")
        assert result.status == "error" and "no longer exists" in result.tool_return  # type: ignore[attr-defined]
