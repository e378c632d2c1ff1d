"""Models, tools, agents, messages, runs and steps, as pre-1.0 programs use them."""

import json

import httpx
from harness import BASE, Ctx, call, client, expect, roll_dice, script, step, text, types_of, wait_run
from letta_client import CreateBlock, MessageCreate, TextContent
from letta_client.core.api_error import ApiError


def flows(ctx: Ctx) -> None:
    # --- server, models, providers -----------------------------------------------------------------------------------
    step("health.check", lambda: client.health.check())
    llms = step("models.list", lambda: client.models.list())
    embeds = step("models.embeddings.list", lambda: client.models.embeddings.list())
    step(
        "models.listembeddingmodels",
        lambda: client.models.listembeddingmodels(),
        letta_too="GET /v1/models/embeddings is Letta Cloud's",
    )
    step("providers.list", lambda: client.providers.list())

    # --- tools -------------------------------------------------------------------------------------------------------
    tool = step("tools.upsert_from_function", lambda: client.tools.upsert_from_function(func=roll_dice))
    step(
        "tools.create_from_function (name taken)",
        lambda: client.tools.create_from_function(func=roll_dice),
        letta_too="409: roll_dice exists",
    )
    step("tools.list", lambda: client.tools.list())
    step("tools.list(name=)", lambda: expect(len(client.tools.list(name="roll_dice")) == 1, "one roll_dice"))
    step("tools.count", lambda: client.tools.count())
    if tool is not None:
        step("tools.retrieve", lambda: client.tools.retrieve(tool.id))
        step("tools.modify", lambda: client.tools.modify(tool.id, description="Roll one die."))
    step("tools.upsert_base_tools", lambda: client.tools.upsert_base_tools())
    step(
        "tools.run_tool_from_source",
        lambda: expect(
            client.tools.run_tool_from_source(
                source_code='def add(a: int, b: int) -> int:\n    """Add.\n\n    Args:\n        a (int): a\n        b (int): b\n    """\n    return a + b\n',
                args={"a": 2, "b": 3},
            ).tool_return
            == "5",
            "tool_return 5",
        ),
    )
    step("tools.list_mcp_servers", lambda: client.tools.list_mcp_servers())

    # --- agents ------------------------------------------------------------------------------------------------------
    agent = step(
        "agents.create",
        lambda: client.agents.create(
            name="legacy-agent",
            memory_blocks=[
                CreateBlock(label="human", value="The user's name is Sam."),
                CreateBlock(label="persona", value="I am a helpful assistant."),
            ],
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
            tools=["roll_dice"],
            tags=["legacy", "smoke"],
        ),
    )
    if agent is None:
        return
    AID = agent.id
    step(
        "agents.create returns tools and memory",
        lambda: expect(
            "roll_dice" in [t.name for t in agent.tools]
            and {b.label for b in agent.memory.blocks} == {"human", "persona"},
            f"tools {[t.name for t in agent.tools]}, blocks {[b.label for b in agent.memory.blocks]}",
        ),
    )
    if llms and embeds:
        step(
            "agents.create(llm_config=models.list()[0], embedding_config=...)",
            lambda: client.agents.delete(
                client.agents.create(
                    name="legacy-config-agent", memory_blocks=[], llm_config=llms[0], embedding_config=embeds[0]
                ).id
            ),
        )
    step(
        "agents.list (relationships included for old SDKs)",
        lambda: expect(
            all(a.memory.blocks and a.tools for a in client.agents.list()), "every listed agent has blocks and tools"
        ),
    )
    step(
        "agents.list(tags=)",
        lambda: expect(AID in [a.id for a in client.agents.list(tags=["legacy"], match_all_tags=True)], "tag filter"),
    )
    step("agents.count", lambda: client.agents.count())
    step("agents.retrieve", lambda: expect(len(client.agents.retrieve(AID).memory.blocks) == 2, "two blocks"))
    step("agents.modify", lambda: client.agents.modify(AID, description="legacy smoke"))
    step("agents.search", lambda: client.agents.search(), letta_too="POST /v1/agents/search is Letta Cloud's")
    step("agents.context.retrieve", lambda: client.agents.context.retrieve(AID))
    exported = step(
        "agents.export_file",
        lambda: client.agents.export_file(AID),
        letta_too="the old SDK declares str; Letta answers the agent file as a JSON object (the SDK hands back a dict)",
    )
    if exported is None:
        exported = httpx.get(f"{BASE}/v1/agents/{AID}/export", timeout=30).json()
    step(
        "agents.import_file",
        lambda: expect(
            len(
                client.agents.import_file(
                    file=("agent.af", json.dumps(exported).encode(), "application/json")
                ).agent_ids
            )
            == 1,
            "one agent imported",
        ),
    )

    # --- messages ----------------------------------------------------------------------------------------------------
    script(text("Hello Sam!"))
    step(
        "agents.messages.create",
        lambda: expect(
            types_of(
                client.agents.messages.create(AID, messages=[MessageCreate(role="user", content="Hi there")]).messages
            )
            == ["AssistantMessage"],
            "one AssistantMessage",
        ),
    )
    script(call("roll_dice", {"sides": 6}), text("You rolled a 4."))

    def tool_turn() -> None:
        response = client.agents.messages.create(
            AID, messages=[MessageCreate(role="user", content=[TextContent(text="Roll a d6")])]
        )
        expect(
            types_of(response.messages) == ["ToolCallMessage", "ToolReturnMessage", "AssistantMessage"],
            types_of(response.messages),
        )
        expect(
            response.messages[1].status == "success" and response.messages[1].tool_return == "4",
            str(response.messages[1]),
        )
        expect(response.stop_reason.stop_reason == "end_turn" and response.usage.step_count == 2, str(response.usage))

    step("agents.messages.create (tool call)", tool_turn)
    script(text("Hidden steps."))
    step(
        "agents.messages.create(use_assistant_message=False, include_return_message_types)",
        lambda: client.agents.messages.create(
            AID,
            messages=[MessageCreate(role="user", content="Hi")],
            use_assistant_message=False,
            include_return_message_types=["assistant_message", "tool_call_message"],
        ),
    )
    script(text("Streaming hello."))
    step(
        "agents.messages.create_stream",
        lambda: expect(
            types_of(
                client.agents.messages.create_stream(
                    AID, messages=[MessageCreate(role="user", content="Stream please")]
                )
            )[-3:]
            == ["AssistantMessage", "LettaStopReason", "LettaUsageStatistics"],
            "assistant, stop reason, usage",
        ),
    )
    script(text("Token by token."))
    step(
        "agents.messages.create_stream(stream_tokens=True)",
        lambda: expect(
            "AssistantMessage"
            in types_of(
                client.agents.messages.create_stream(
                    AID, messages=[MessageCreate(role="user", content="Tokens please")], stream_tokens=True
                )
            ),
            "assistant chunks",
        ),
    )
    script(text("Async hello."))
    run = step(
        "agents.messages.create_async",
        lambda: client.agents.messages.create_async(
            AID, messages=[MessageCreate(role="user", content="In background")]
        ),
    )
    if run is not None:
        step("runs.retrieve (poll to completed)", lambda: expect(wait_run(run.id).status == "completed", "completed"))
        step(
            "runs.messages.list",
            lambda: expect("AssistantMessage" in types_of(client.runs.messages.list(run.id)), "assistant"),
        )
        step("runs.steps.list", lambda: expect(len(client.runs.steps.list(run.id)) == 1, "one step"))
        step("runs.usage.retrieve", lambda: client.runs.usage.retrieve(run.id))
        step(
            "runs.stream (of a create_async run)",
            lambda: list(client.runs.stream(run.id)),
            letta_too="create_async writes no stream chunks: Letta waits for them forever (503 without Redis); memlet "
            "ends the stream with an error_message chunk, a type the old SDK's union lacks",
        )
    script(text("In the background."))

    def background_stream() -> None:
        chunks = list(
            client.agents.messages.create_stream(
                AID, messages=[MessageCreate(role="user", content="Background")], background=True
            )
        )
        run_id = next(c.run_id for c in chunks if getattr(c, "run_id", None))
        wait_run(run_id)
        replay = list(client.runs.stream(run_id, starting_after=0))
        expect(
            types_of(replay)[-3:] == ["AssistantMessage", "LettaStopReason", "LettaUsageStatistics"], types_of(replay)
        )

    step("agents.messages.create_stream(background=True) + runs.stream", background_stream)
    step("runs.list", lambda: client.runs.list())
    step("runs.list(agent_ids=)", lambda: client.runs.list(agent_ids=[AID]))
    step("runs.list_active", lambda: client.runs.list_active())

    def cancel_idle() -> None:
        try:
            client.agents.messages.cancel(AID)
        except ApiError as exc:
            expect(exc.status_code == 409, str(exc))  # Letta's NoActiveRunsToCancelError
            return
        raise AssertionError("cancelling an idle agent did not answer 409")

    step("agents.messages.cancel (nothing running: 409)", cancel_idle)
    step(
        "agents.messages.list",
        lambda: expect(types_of(client.agents.messages.list(AID))[0] == "SystemMessage", "system first"),
    )
    step(
        "agents.messages.list(limit, use_assistant_message)",
        lambda: client.agents.messages.list(AID, limit=5, use_assistant_message=False),
    )
    steps = step("steps.list", lambda: client.steps.list())
    if steps:
        step("steps.retrieve", lambda: client.steps.retrieve(steps[0].id))
        step("steps.messages.list", lambda: client.steps.messages.list(steps[0].id))
        step("steps.feedback.create", lambda: client.steps.feedback.create(steps[0].id, feedback="positive"))
    step("jobs.list", lambda: client.jobs.list())

    ctx.aid, ctx.tool = AID, tool
