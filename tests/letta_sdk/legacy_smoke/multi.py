"""Groups, batches, sleeptime agents, jobs and agent settings."""

import time

from harness import Ctx, client, expect, script, step, text
from letta_client import CreateBlock, LettaBatchRequest, MessageCreate, RoundRobinManager


def flows(ctx: Ctx) -> None:
    AID, tool = ctx.aid, ctx.tool
    # --- groups ------------------------------------------------------------------------------------------------------
    agent2 = step(
        "agents.create (second, for a group)",
        lambda: client.agents.create(
            name="legacy-agent-2",
            memory_blocks=[CreateBlock(label="persona", value="I am the second agent.")],
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
        ),
    )
    grp = None
    if agent2 is not None:
        grp = step(
            "groups.create",
            lambda: client.groups.create(
                agent_ids=[AID, agent2.id], description="pair", manager_config=RoundRobinManager(max_turns=2)
            ),
        )
    step("groups.list", lambda: client.groups.list())
    step("groups.count", lambda: client.groups.count())
    if grp is not None:
        step("groups.retrieve", lambda: client.groups.retrieve(grp.id))
        step("groups.modify", lambda: client.groups.modify(grp.id, description="pair, edited"))
        gone = "POST /v1/groups/{id}/messages[/stream] is gone from Letta 0.16.8 (send to an agent of the group)"
        step(
            "groups.messages.create",
            lambda: client.groups.messages.create(grp.id, messages=[MessageCreate(role="user", content="Hello group")]),
            letta_too=gone,
        )
        step(
            "groups.messages.create_stream",
            lambda: list(
                client.groups.messages.create_stream(grp.id, messages=[MessageCreate(role="user", content="Again")])
            ),
            letta_too=gone,
        )
        script(text("Group member says hi."))
        step(
            "agents.messages.create (agent in a group)",
            lambda: client.agents.messages.create(
                agent2.id, messages=[MessageCreate(role="user", content="Hello group")]
            ),
        )
        step("groups.messages.list", lambda: client.groups.messages.list(grp.id))
        step("groups.messages.reset", lambda: client.groups.messages.reset(grp.id))
        step("agents.groups.list", lambda: client.agents.groups.list(AID))
        step("groups.delete", lambda: client.groups.delete(grp.id))

    # --- batches -----------------------------------------------------------------------------------------------------
    script(text("Batched."))
    batch = step(
        "batches.create",
        lambda: client.batches.create(
            requests=[LettaBatchRequest(agent_id=AID, messages=[MessageCreate(role="user", content="In a batch")])]
        ),
    )
    step("batches.list", lambda: client.batches.list())
    if batch is not None:
        step("batches.retrieve", lambda: client.batches.retrieve(batch.id))

    # --- sleeptime, supervisor groups, secrets, jobs, batch messages, modify lists -----------------------------------
    def sleeptime_agent() -> None:
        helper = client.agents.create(
            name="legacy-sleeper",
            memory_blocks=[CreateBlock(label="human", value="Sam")],
            enable_sleeptime=True,
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
        )
        try:
            state = client.agents.retrieve(helper.id)
            expect(
                state.multi_agent_group is not None and state.multi_agent_group.manager_type == "sleeptime",
                str(state.multi_agent_group),
            )
            script(text("Noted."))
            client.agents.messages.create(helper.id, messages=[MessageCreate(role="user", content="I like tea")])
            groups = client.groups.list(manager_type="sleeptime")
            expect(any(g.id == state.multi_agent_group.id for g in groups), "the sleeptime group is listed")
        finally:
            client.agents.delete(helper.id)

    step("enable_sleeptime: multi_agent_group, a turn, groups.list(manager_type=)", sleeptime_agent)
    if agent2 is None:
        agent2 = step(
            "agents.create (third, for a supervisor group)",
            lambda: client.agents.create(
                name="legacy-agent-3",
                memory_blocks=[],
                model="openai/gpt-4o-mini",
                embedding="openai/text-embedding-3-small",
            ),
        )
    step(
        "agents.modify(tool_exec_environment_variables=)",
        lambda: expect(
            {
                v.key: v.value
                for v in client.agents.modify(
                    AID, tool_exec_environment_variables={"API_KEY": "k1"}
                ).tool_exec_environment_variables
            }.get("API_KEY")
            is not None,
            "API_KEY listed",
        ),
    )
    step(
        "agents.modify(tags=, tool_ids=)",
        lambda: client.agents.modify(AID, tags=["legacy", "smoke", "more"], tool_ids=[tool.id] if tool else []),
    )
    step(
        "agents.list(query_text=, ascending=)", lambda: client.agents.list(query_text="legacy", ascending=True, limit=5)
    )
    step(
        "agents.list(include_relationships=[memory])",
        lambda: expect(
            all(not a.tools and a.memory.blocks for a in client.agents.list(include_relationships=["memory"], limit=5)),
            "blocks loaded, tools not",
        ),
    )
    step("jobs.list(active=True)", lambda: client.jobs.list(active=True))
    step("jobs.list_active", lambda: client.jobs.list_active())
    step("runs.list(active=True)", lambda: client.runs.list(active=True))
    if batch is not None:
        step("batches.messages.list", lambda: client.batches.messages.list(batch.id))
        step("jobs.retrieve (a batch's job)", lambda: client.jobs.retrieve(batch.id))
    step("blocks.list(templates_only=False, name=)", lambda: client.blocks.list(templates_only=False, name="human"))

    def duplicate_upload() -> None:
        source = client.sources.create(name="legacy-dup", embedding="openai/text-embedding-3-small")
        try:
            for _ in range(2):
                client.sources.files.upload(
                    source.id, file=("same.txt", b"Same text.\n", "text/plain"), duplicate_handling="replace"
                )
            time.sleep(1)
            expect(len(client.sources.files.list(source.id)) == 1, "one file after a replace")
        finally:
            client.sources.delete(source.id)

    step("sources.files.upload(duplicate_handling=replace)", duplicate_upload)

    ctx.agent2, ctx.batch = agent2, batch
