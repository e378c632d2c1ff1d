"""Approvals, memgpt agents and tool rules, images, previews, summaries, traces, and MCP servers through the old
/v1/tools/mcp/servers routes (when a demo MCP server was given)."""

from harness import MCP_URL, PNG_1PX, Ctx, call, client, expect, script, step, text, types_of
from letta_client import (
    ApprovalCreate,
    Base64Image,
    CreateBlock,
    ImageContent,
    LettaRequest,
    MessageCreate,
    StreamableHttpServerConfig,
    TerminalToolRule,
    TextContent,
)
from letta_client.types.update_streamable_httpmcp_server import UpdateStreamableHttpmcpServer


def flows(ctx: Ctx) -> None:
    AID = ctx.aid

    # --- approvals, tool rules, memgpt agents, images, previews, summaries, traces -----------------------------------
    def ask_first(question: str) -> str:
        """Ask before acting.

        Args:
            question (str): What to ask.

        Returns:
            str: The answer.
        """
        return "yes"

    def approval_flow() -> None:
        client.tools.upsert_from_function(func=ask_first)
        helper = client.agents.create(
            name="legacy-approver",
            memory_blocks=[],
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
            tools=["ask_first"],
        )
        try:
            client.agents.tools.modify_approval(helper.id, "ask_first", requires_approval=True)
            script(call("ask_first", {"question": "May I?"}))
            first = client.agents.messages.create(helper.id, messages=[MessageCreate(role="user", content="Go")])
            expect(types_of(first.messages)[-1] == "ApprovalRequestMessage", types_of(first.messages))
            expect(first.stop_reason.stop_reason == "requires_approval", str(first.stop_reason))
            script(text("Done."))
            second = client.agents.messages.create(
                helper.id, messages=[ApprovalCreate(approve=True, approval_request_id=first.messages[-1].id)]
            )
            expect(
                types_of(second.messages)[-2:] == ["ToolReturnMessage", "AssistantMessage"], types_of(second.messages)
            )
            expect(second.messages[-2].tool_return == "yes", str(second.messages[-2]))
            listed = types_of(client.agents.messages.list(helper.id))
            expect("ApprovalRequestMessage" in listed and "ApprovalResponseMessage" in listed, listed)
        finally:
            client.agents.delete(helper.id)

    step("approval: ApprovalRequestMessage, then ApprovalCreate(approve=True)", approval_flow)

    def memgpt_agent() -> None:
        helper = client.agents.create(
            name="legacy-memgpt",
            agent_type="memgpt_v2_agent",
            memory_blocks=[CreateBlock(label="human", value="Sam")],
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
            tool_rules=[TerminalToolRule(tool_name="send_message")],
        )
        try:
            expect(any(type(r).__name__ == "TerminalToolRule" for r in helper.tool_rules), str(helper.tool_rules))
            script(
                {
                    "kind": "message",
                    "content": "Greeting Sam.",
                    "calls": [{"name": "send_message", "arguments": {"message": "Hi Sam"}}],
                    "finish_reason": "tool_calls",
                }
            )
            response = client.agents.messages.create(helper.id, messages=[MessageCreate(role="user", content="Hi")])
            expect(types_of(response.messages) == ["ReasoningMessage", "AssistantMessage"], types_of(response.messages))
            expect(response.messages[1].content == "Hi Sam", str(response.messages[1]))
            script(
                {
                    "kind": "message",
                    "content": "Greeting again.",
                    "calls": [{"name": "send_message", "arguments": {"message": "Hello"}}],
                    "finish_reason": "tool_calls",
                }
            )
            chunks = types_of(
                client.agents.messages.create_stream(
                    helper.id, messages=[MessageCreate(role="user", content="Again")], stream_tokens=True
                )
            )
            expect("ReasoningMessage" in chunks and "AssistantMessage" in chunks, chunks)
        finally:
            client.agents.delete(helper.id)

    step("memgpt_v2_agent with send_message and a TerminalToolRule", memgpt_agent)
    script(text("A red pixel."))
    step(
        "agents.messages.create (ImageContent, base64)",
        lambda: client.agents.messages.create(
            AID,
            messages=[
                MessageCreate(
                    role="user",
                    content=[
                        TextContent(text="What is this?"),
                        ImageContent(source=Base64Image(media_type="image/png", data=PNG_1PX)),
                    ],
                )
            ],
        ),
    )
    step(
        "agents.messages.preview",
        lambda: client.agents.messages.preview(
            AID, request=LettaRequest(messages=[MessageCreate(role="user", content="Hi")])
        ),
    )
    script(text("Summary of the talk so far."))
    step("agents.messages.summarize", lambda: client.agents.messages.summarize(AID, max_message_length=4))
    last_steps = step("steps.list(agent_id=)", lambda: client.steps.list(agent_id=AID, limit=1))
    if last_steps:
        step("steps.metrics.retrieve", lambda: client.steps.metrics.retrieve(last_steps[0].id))
        step("steps.trace.retrieve", lambda: client.steps.trace.retrieve(last_steps[0].id))
        step("telemetry.retrieve_provider_trace", lambda: client.telemetry.retrieve_provider_trace(last_steps[0].id))
    step(
        "tools.create(source_code=)",
        lambda: client.tools.delete(
            client.tools.create(
                source_code='def shout(text: str) -> str:\n    """Shout.\n\n    Args:\n        text (str): Words.\n    """\n    return text.upper()\n'
            ).id
        ),
    )

    # --- MCP servers through the old /v1/tools/mcp/servers routes (when a demo MCP server was given) -----------------
    if MCP_URL:
        mcp_config = StreamableHttpServerConfig(server_name="legacy-demo", type="streamable_http", server_url=MCP_URL)
        step("tools.add_mcp_server (streamable_http)", lambda: client.tools.add_mcp_server(request=mcp_config))
        step("tools.list_mcp_servers", lambda: expect("legacy-demo" in client.tools.list_mcp_servers(), "listed"))
        step(
            "tools.list_mcp_tools_by_server",
            lambda: expect(
                any(t.name == "echo" and t.input_schema for t in client.tools.list_mcp_tools_by_server("legacy-demo")),
                "echo with its input schema",
            ),
        )
        mcp_tool = step("tools.add_mcp_tool", lambda: client.tools.add_mcp_tool("legacy-demo", "echo"))
        step("tools.test_mcp_server", lambda: client.tools.test_mcp_server(request=mcp_config))
        if mcp_tool is not None:

            def mcp_turn() -> None:
                client.agents.tools.attach(AID, mcp_tool.id)
                script(call("echo", {"message": "hey"}), text("It echoed."))
                response = client.agents.messages.create(AID, messages=[MessageCreate(role="user", content="Echo hey")])
                expect(response.messages[1].tool_return == "Echo: hey", types_of(response.messages))
                client.agents.tools.detach(AID, mcp_tool.id)

            step("agent calls the MCP tool", mcp_turn)
        step(
            "tools.update_mcp_server",
            lambda: client.tools.update_mcp_server(
                "legacy-demo", request=UpdateStreamableHttpmcpServer(server_url=MCP_URL)
            ),
        )
        step("tools.delete_mcp_server", lambda: client.tools.delete_mcp_server("legacy-demo"))
