"""What Letta 0.16.8's own MCP tests pin down that a user or the model sees (tests/mcp_tests/test_mcp.py,
test_mcp_schema_validation.py, tests/managers/test_mcp_manager.py, tests/integration_test_mcp.py): a discovered
tool's schema health (`mcp:SCHEMA_STATUS` / `mcp:SCHEMA_WARNINGS` in its json_schema, `health` in the legacy
listing), strict mode only for the tools whose schema allows it, and the tool definitions the model is sent."""

from pathlib import Path
from typing import Any

import httpx
from letta_client import Letta

from tests.api.mcp_fixtures import http_demo, mcp_client, mcp_http, mcp_server, stdio_config
from tests.mock_llm import MockLLM, Reply

__all__ = ["http_demo", "mcp_client", "mcp_http", "mcp_server"]
MODEL = "openai/gpt-4o-mini"
STATUS, WARNINGS = "mcp:SCHEMA_STATUS", "mcp:SCHEMA_WARNINGS"
STRICT = {"provider_type": "openai", "strict": True}


def _tools(client: Letta, server_id: str) -> dict[str, Any]:
    return {t.name: t for t in client.mcp_servers.tools.list(server_id)}


def _sent_tools(client: Letta, mock_llm: MockLLM, agent_id: str) -> dict[str, dict[str, Any]]:
    """The tool definitions the model is sent for one user message, by name."""
    mock_llm.reset()
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    return {t["function"]["name"]: t["function"] for t in mock_llm.requests[0]["tools"]}


class TestSchemaHealth:
    def test_stored_tools_carry_their_grade(self, mcp_client: Letta) -> None:
        server = mcp_client.mcp_servers.create(server_name="demo", config=stdio_config("--loose"))
        tools = _tools(mcp_client, server.id)
        echo, free, loose = (tools[n].json_schema for n in ("echo", "search_with_filters", "any_value"))
        assert (echo[STATUS], echo[WARNINGS]) == ("STRICT_COMPLIANT", [])
        assert free[STATUS] == "NON_STRICT_ONLY" and any("additionalProperties" in r for r in free[WARNINGS])
        # Letta skipped a tool it graded INVALID; memlet keeps it (see the README's compatibility notes).
        assert loose[STATUS] == "INVALID" and any("type" in r and "value" in r for r in loose[WARNINGS])
        assert mcp_client.tools.retrieve(tools["any_value"].id).json_schema[STATUS] == "INVALID"

    def test_the_legacy_listing_grades_the_same(self, mcp_client: Letta, mcp_http: httpx.Client) -> None:
        mcp_client.mcp_servers.create(server_name="demo", config=stdio_config("--loose"))
        live = {t["name"]: t["health"] for t in mcp_http.get("/v1/tools/mcp/servers/demo/tools").json()}
        stored = {n: t.json_schema for n, t in _tools(mcp_client, mcp_client.mcp_servers.list()[0].id).items()}
        for name, health in live.items():
            assert health == {"status": stored[name][STATUS], "reasons": stored[name][WARNINGS]}, name
        assert live["any_value"]["status"] == "INVALID" and live["create_person"]["status"] == "STRICT_COMPLIANT"


class TestWhatTheModelIsSent:
    def test_strict_mode_only_for_tools_whose_schema_allows_it(self, mcp_client: Letta, mock_llm: MockLLM) -> None:
        server = mcp_client.mcp_servers.create(server_name="demo", config=stdio_config("--loose"))
        tools = _tools(mcp_client, server.id)
        names = ("echo", "search_with_filters", "any_value")
        agent = mcp_client.agents.create(
            name="strict", model=MODEL, model_settings=STRICT, tool_ids=[tools[n].id for n in names]
        )
        sent = _sent_tools(mcp_client, mock_llm, agent.id)
        assert sent["echo"]["strict"] is True and sent["echo"]["parameters"]["additionalProperties"] is False
        for name in ("search_with_filters", "any_value"):  # NON_STRICT_ONLY and INVALID: as the server wrote them
            assert "strict" not in sent[name], name
            assert sent[name]["parameters"]["properties"] == tools[name].json_schema["parameters"]["properties"]
        for function in sent.values():
            assert not [k for k in function if k.startswith("mcp:")], function["name"]
        # The loose tool still runs.
        mock_llm.script(Reply.tool_call("any_value", {"value": "x"}), Reply.text("done"))
        response = mcp_client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
        (result,) = [m for m in response.messages if m.message_type == "tool_return_message"]
        assert result.status == "success" and "got 'x'" in result.tool_return  # type: ignore[union-attr]

    def test_a_letta_stored_heartbeat_is_not_sent_to_letta_v1_agents_nor_twice_to_memgpt_ones(
        self, mcp_client: Letta, mock_llm: MockLLM
    ) -> None:
        server = mcp_client.mcp_servers.create(server_name="demo", config=stdio_config())
        echo = _tools(mcp_client, server.id)["echo"]
        # Letta stores an MCP tool's schema with a required request_heartbeat (agent files from Letta carry it).
        schema = dict(echo.json_schema)
        params = schema["parameters"]
        schema["parameters"] = {
            **params,
            "properties": {**params["properties"], "request_heartbeat": {"type": "boolean", "description": "hb"}},
            "required": [*params["required"], "request_heartbeat"],
        }
        mcp_client.tools.update(echo.id, json_schema=schema)
        v1 = mcp_client.agents.create(name="v1", model=MODEL, tool_ids=[echo.id], agent_type="letta_v1_agent")
        sent = _sent_tools(mcp_client, mock_llm, v1.id)["echo"]["parameters"]
        assert "request_heartbeat" not in sent["properties"] and sent["required"] == ["message"]
        v2 = mcp_client.agents.create(name="v2", model=MODEL, tool_ids=[echo.id], agent_type="memgpt_v2_agent")
        mock_llm.reset()
        mock_llm.script(Reply.tool_call("send_message", {"message": "ok"}))
        mcp_client.agents.messages.create(v2.id, messages=[{"role": "user", "content": "hi"}])
        sent = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "echo")
        assert sent["parameters"]["required"].count("request_heartbeat") == 1


class TestUpdate:
    def test_a_config_update_lists_the_servers_tools_again(self, mcp_client: Letta, tmp_path: Path) -> None:
        """Letta's PATCH stored the new config and kept the old tools until a refresh; memlet lists them again
        (README compatibility notes), so a server moved to another URL or command brings its own tools."""
        switch = tmp_path / "tools"
        switch.write_text("none")
        config = stdio_config("--tools-file", str(switch))
        server = mcp_client.mcp_servers.create(server_name="moving", config=config)
        assert _tools(mcp_client, server.id) == {}
        switch.write_text("all")
        mcp_client.mcp_servers.update(server.id, config={**config, "args": [*config["args"], "--extras"]})
        assert {"echo", "whoami"} <= set(_tools(mcp_client, server.id))
        switch.write_text("none")
        bad = {"mcp_server_type": "stdio", "command": "/nonexistent/mcp-server", "args": []}
        mcp_client.mcp_servers.update(server.id, config=bad)  # unreachable: the tools it had stay
        assert {"echo", "whoami"} <= set(_tools(mcp_client, server.id))
