"""letta-evals (Letta's evaluation kit, 0.26.0) against memlet: the calls its suites, agent factories and result
fetches make, through letta-client's AsyncLetta as the kit makes them.

The kit's agent factories create an agent per sample (the leaderboard's memory suites: a "Supporting Facts" block,
no agent type; the filesystem suite: a folder of data files and the file tools), Letta Code then drives a turn in a
conversation of its own, and the kit reads the result back: every message of the agent, oldest first, 200 a page
with an `after` cursor until a page comes back empty (`utils.list_all_agent_messages`); the agent with
`include=["agent.blocks"]` for its memory extractor; the agent's `llm_config` for pricing; its runs oldest first,
paged, for token data (`execution/trace.py`); then it deletes the agent.
"""

from typing import Any

import anyio
import httpx
import pytest
from letta_client import AsyncLetta, NotFoundError
from letta_client.types import CreateBlockParam, MessageCreateParam
from letta_client.types.agents import AssistantMessage, ToolCallMessage
from letta_client.types.tool_return_message import ToolReturnMessage
from pydantic import BaseModel

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
PEOPLE = b"### Robert Smith (ID: pers-0001)\n### Linda Robbins (ID: pers-0002)\nDOB: 1976-05-16\n"
FACTS = "1. Nora plays the violin.\n2. Nora and Eliza ran a charity event."


@pytest.fixture
def evals(server: LiveServer) -> AsyncLetta:
    return AsyncLetta(base_url=server.base_url, max_retries=0, timeout=60)


async def all_messages(client: AsyncLetta, agent_id: str, page_limit: int = 200) -> list[Any]:
    """The kit's `list_all_agent_messages`: ascending pages, `after` the last id, until a page is empty."""
    messages: list[Any] = []
    after: str | None = None
    while True:
        kwargs: dict[str, Any] = {"agent_id": agent_id, "limit": page_limit, "order": "asc"}
        if after is not None:
            kwargs["after"] = after
        items = (await client.agents.messages.list(**kwargs)).items
        if not items:
            return messages
        messages.extend(items)
        after = items[-1].id


async def memory_agent(client: AsyncLetta) -> str:
    """The core-memory-update leaderboard factory: a fresh agent with the facts in a block whose label has a space."""
    agent = await client.agents.create(
        name="Core Memory Updater",
        memory_blocks=[
            CreateBlockParam(label="persona", value="You answer from the facts in your core memory."),
            CreateBlockParam(label="Supporting Facts", value=FACTS),
        ],
        model=MODEL,
        embedding=EMBEDDING,
    )
    return agent.id


async def test_memory_suite_reads_both_turns_and_the_updated_block(evals: AsyncLetta, mock_llm: MockLLM) -> None:
    agent_id = await memory_agent(evals)
    edit = {"label": "Supporting Facts", "old_string": "Nora and Eliza", "new_string": "Joren and Eliza"}
    mock_llm.script(Reply.tool_call("memory_replace", edit), Reply.text("Updated."), Reply.text("It was Joren."))
    # The factory sends the contradicting fact and only drains the stream.
    stream = await evals.agents.messages.stream(
        agent_id=agent_id,
        messages=[MessageCreateParam(role="user", content="New information: Joren and Eliza ran the event.")],
        stream_tokens=True,
    )
    async for _ in stream:
        pass
    # Letta Code then asks the question in a conversation of its own.
    conversation = await evals.conversations.create(agent_id=agent_id)
    turn = await evals.conversations.messages.create(
        conversation.id, messages=[{"role": "user", "content": "Who ran the charity event with Eliza?"}]
    )
    async for _ in turn:
        pass

    trajectory = await all_messages(evals, agent_id)
    kinds = [m.message_type for m in trajectory]
    assert kinds == [
        "system_message",
        "user_message",
        "tool_call_message",
        "tool_return_message",
        "assistant_message",
        "system_message",  # the conversation's own system message is the agent's too
        "user_message",
        "assistant_message",
    ]
    assert [m.id for m in await all_messages(evals, agent_id, page_limit=1)] == [m.id for m in trajectory]
    # The kit's extractors: the last assistant message, and a tool's return found through its call's id.
    assert [m.content for m in trajectory if isinstance(m, AssistantMessage)][-1] == "It was Joren."
    [call] = [m for m in trajectory if isinstance(m, ToolCallMessage)]
    assert call.tool_calls and call.tool_calls[0].name == "memory_replace"
    [back] = [m for m in trajectory if isinstance(m, ToolReturnMessage)]
    assert back.tool_call_id == call.tool_calls[0].tool_call_id and "Joren and Eliza" in back.tool_return

    state = await evals.agents.retrieve(agent_id=agent_id, include=["agent.blocks"])
    facts = {b.label: b.value for b in state.blocks}["Supporting Facts"]
    assert facts == FACTS.replace("Nora and Eliza", "Joren and Eliza")
    # Pricing reads the model behind the handle.
    config = (await evals.agents.retrieve(agent_id=agent_id)).llm_config
    assert (config.model, config.model_endpoint_type, config.provider_name) == ("gpt-4o-mini", "openai", "openai")


async def test_runs_come_oldest_first_page_by_page_and_cleanup_deletes(evals: AsyncLetta, mock_llm: MockLLM) -> None:
    agent_id = await memory_agent(evals)
    conversation = await evals.conversations.create(agent_id=agent_id)
    for n in range(3):
        mock_llm.script(Reply.text(f"answer {n}"))
        turn = await evals.conversations.messages.create(
            conversation.id, messages=[{"role": "user", "content": f"question {n}"}]
        )
        async for _ in turn:
            pass

    # execution/trace.py: runs.list(agent_id, limit, order="asc"), then the SDK's next pages until one is empty.
    page = await evals.runs.list(agent_id=agent_id, limit=2, order="asc")
    runs = list(page.items)
    while page.has_next_page():
        page = await page.get_next_page()
        runs.extend(page.items)
    assert len(runs) == 3 and len({r.id for r in runs}) == 3
    assert [r.created_at for r in runs] == sorted(r.created_at for r in runs)
    for summary in runs:
        run = await evals.runs.retrieve(run_id=summary.id)
        assert run.status == "completed" and "result" not in (run.metadata or {})  # no token turns to read

    await evals.agents.delete(agent_id=agent_id)
    with pytest.raises(NotFoundError):
        await evals.agents.retrieve(agent_id=agent_id)
    with pytest.raises(NotFoundError):
        await evals.conversations.retrieve(conversation.id)


async def uploaded_folder(client: AsyncLetta, name: str) -> str:
    """The filesystem suite's setup: drop the folders of that name, make it again and upload the data files."""
    stale = [folder.id async for folder in await client.folders.list(name=name)]  # auto-paginated by the SDK
    for folder_id in stale:
        await client.folders.delete(folder_id=folder_id)
    folder = await client.folders.create(name=name, embedding=EMBEDDING)
    upload = await client.folders.files.upload(folder_id=folder.id, file=("people.txt", PEOPLE, "text/plain"))
    for _ in range(200):
        file = await client.folders.files.retrieve(upload.id, folder_id=folder.id)
        if file.processing_status in ("completed", "error"):
            break
        await anyio.sleep(0.1)
    assert file.processing_status == "completed"
    return folder.id


async def test_filesystem_suite_setup_runs_twice_and_the_agent_greps(evals: AsyncLetta, mock_llm: MockLLM) -> None:
    first = await uploaded_folder(evals, "filesystem_data")
    second = await uploaded_folder(evals, "filesystem_data")  # a second run finds and deletes the first folder
    assert [f.id async for f in await evals.folders.list(name="filesystem_data")] == [second] != [first]

    # The factory: only the file tools it names, no base tools or rules, a system prompt of its own, then the folder.
    tool_ids = [(await evals.tools.list(name=name)).items[0].id for name in ("open_files", "grep_files")]
    agent = await evals.agents.create(
        name="Filesystem Agent",
        model=MODEL,
        embedding=EMBEDDING,
        include_base_tools=False,
        tool_ids=tool_ids,
        max_files_open=10,
        per_file_view_window_char_limit=8000,
        agent_type="letta_v1_agent",
        include_base_tool_rules=False,
        system="You answer questions about the files.",
    )
    folder_id = (await evals.folders.list(name="filesystem_data")).items[0].id
    await evals.agents.folders.attach(agent_id=agent.id, folder_id=folder_id)

    mock_llm.script(Reply.tool_call("grep_files", {"pattern": "Linda Robbins"}), Reply.text("Linda Robbins."))
    turn = await evals.agents.messages.create(
        agent_id=agent.id, messages=[MessageCreateParam(role="user", content="Who owns pet Eduardo?")]
    )
    assert turn.stop_reason and turn.stop_reason.stop_reason == "end_turn"
    trajectory = await all_messages(evals, agent.id)
    [call] = [m for m in trajectory if isinstance(m, ToolCallMessage)]
    [back] = [
        m for m in trajectory if isinstance(m, ToolReturnMessage) and m.tool_call_id == call.tool_call.tool_call_id
    ]
    assert back.status == "success" and "filesystem_data/people.txt" in back.tool_return
    assert "> 2: ### Linda Robbins (ID: pers-0002)" in back.tool_return
    state = await evals.agents.retrieve(agent_id=agent.id, include=["agent.tools"])
    assert sorted(t.name for t in state.tools) == ["grep_files", "open_files", "semantic_search_files"]


async def test_a_reply_with_reasoning_pages_as_one_row(evals: AsyncLetta, mock_llm: MockLLM) -> None:
    """A stored reply with reasoning lists as two messages under one id. Pages count stored rows, as in Letta, so the
    kit's cursor (`after` the last id it got) never separates the reasoning from the answer its extractor reads."""
    agent_id = await memory_agent(evals)
    mock_llm.script(Reply.text("It was Nora.", reasoning="The facts name Nora."))
    await evals.agents.messages.create(agent_id=agent_id, messages=[MessageCreateParam(role="user", content="Who?")])

    first = (await evals.agents.messages.list(agent_id=agent_id, limit=1, order="asc")).items
    assert [m.message_type for m in first] == ["system_message"]
    for page_limit in (1, 2, 200):
        trajectory = await all_messages(evals, agent_id, page_limit=page_limit)
        kinds = [m.message_type for m in trajectory]
        assert kinds == ["system_message", "user_message", "reasoning_message", "assistant_message"], page_limit
        assert trajectory[2].id == trajectory[3].id and trajectory[3].content == "It was Nora."


class InventoryItem(BaseModel):
    sku: str
    name: str
    price: float
    category: str


class InventoryEntry(BaseModel):
    timestamp: int
    item: InventoryItem
    transaction_id: str


class InventoryEntryData(BaseModel):
    data: InventoryEntry
    quantity_change: int


# The kit's programmatic-agent-creation example (and Letta's own pydantic tool test): the tool's signature names the
# models of its args schema, which only the schema defines.
INVENTORY = """def evals_ci_manage_inventory_tool(data: InventoryEntry, quantity_change: int) -> bool:
    \"\"\"Update inventory catalogue with a new data entry\"\"\"
    print(f"Updated inventory for {data.item.name} with a quantity change of {quantity_change}")
    return True
"""
ENTRY = {
    "data": {
        "timestamp": 1640995200,
        "item": {"sku": "SKU-123", "name": "Widget A", "price": "19.99", "category": "electronics"},
        "transaction_id": "TXN-1",
    },
    "quantity_change": "10",
}


async def test_a_tool_with_an_args_schema_gets_its_models(evals: AsyncLetta, mock_llm: MockLLM) -> None:
    """Letta's sandbox defines the models of a tool's `args_json_schema` before the tool's code and hands the
    arguments over validated into them, so `data.item.name` works (memlet passed plain dicts, and the signature's
    `InventoryEntry` was a NameError)."""
    tool = await evals.tools.upsert(
        source_code=INVENTORY, args_json_schema=InventoryEntryData.model_json_schema(), tags=["inventory", "shop"]
    )
    assert (await evals.tools.list(name="evals_ci_manage_inventory_tool")).items[0].id == tool.id
    agent = await evals.agents.create(
        name="inventory-assistant",
        memory_blocks=[CreateBlockParam(label="persona", value="You manage the inventory.")],
        agent_type="letta_v1_agent",
        model=MODEL,
        embedding=EMBEDDING,
        tool_ids=[tool.id],
        include_base_tools=False,
    )
    mock_llm.script(Reply.tool_call("evals_ci_manage_inventory_tool", ENTRY), Reply.text("Done."))
    await evals.agents.messages.create(agent_id=agent.id, messages=[{"role": "user", "content": "Add 10 units"}])

    trajectory = await all_messages(evals, agent.id)
    [back] = [m for m in trajectory if isinstance(m, ToolReturnMessage)]
    assert back.status == "success" and back.tool_return == "True", (back.tool_return, back.stderr)
    assert back.stdout == ["Updated inventory for Widget A with a quantity change of 10\n"]


async def test_the_schema_models_reach_every_way_a_tool_runs(evals: AsyncLetta, server: LiveServer) -> None:
    """The same holds for a tool run through the API, and a parameter annotated `dict` gets what Letta's coercion
    makes of the model: `dict(model)`, whose nested values are still models."""
    source = """def peek(data: dict, quantity_change: int) -> str:
    \"\"\"Show what arrives\"\"\"
    return f"{type(data).__name__} {type(data['item']).__name__} {data['item'].price + 1} {quantity_change + 1}"
"""
    schema = InventoryEntryData.model_json_schema()
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        ran = await http.post("/v1/tools/run", json={"source_code": source, "args": ENTRY, "args_json_schema": schema})
        assert ran.status_code == 200, ran.text
        assert ran.json()["status"] == "success" and ran.json()["tool_return"] == "dict InventoryItem 20.99 11"
        # Arguments the schema rejects fail the call, as the model's own arguments do in Letta.
        body = {"source_code": source, "args": {**ENTRY, "quantity_change": "many"}, "args_json_schema": schema}
        bad = (await http.post("/v1/tools/run", json=body)).json()
        assert bad["status"] == "error" and "ValidationError" in bad["tool_return"]
    tool = await evals.tools.upsert(source_code=source, args_json_schema=schema)
    agent = await evals.agents.create(name="peek", model=MODEL, embedding=EMBEDDING, tool_ids=[tool.id])
    run = await evals.agents.tools.run(agent_id=agent.id, tool_name="peek", args=ENTRY)
    assert run.status == "success" and run.func_return == "dict InventoryItem 20.99 11"
