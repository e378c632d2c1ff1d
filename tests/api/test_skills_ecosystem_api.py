"""The Letta API examples Letta Code agents and users copy from letta-ai/skills (letta/letta-api-client/examples),
driven as they drive the server, on the Anthropic handle they use.

- 13_client_side_tools (Python and TypeScript): a tool upserted with `default_requires_approval` runs on the
  client: the turn stops at an `approval_request_message`, the client runs the command and sends back an approval
  of type `tool` with its output, status and stdout/stderr lines, and the model reads that output.
- 12_tool_rules: a fetch -> process -> format pipeline (`run_first`, `constrain_child_tools`, `exit_loop`): each
  step offers the model only the tool the rules allow, and the turn ends after the terminal tool. The Python copy's
  one-line docstrings name no `Args:`, so Letta refuses those tools with a 400; the TypeScript copy documents them.
"""

import json
from typing import Any

import pytest
from letta_client import BadRequestError, Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"

RUN_LOCAL_COMMAND = '''def run_local_command(command: str) -> str:
    """
    Run a shell command on the local machine.

    Args:
        command: The shell command to execute

    Returns:
        Command output as a string
    """
    # This code never runs - tool executes client-side
    raise Exception("This tool executes client-side only")
'''


def _pipeline_tool(name: str, arg: str, body: str) -> str:
    return f'''
def {name}({arg}: str) -> str:
    """
    Step {name} of the pipeline.

    Args:
        {arg}: The input of this step

    Returns:
        The step's output
    """
    return f"{body}: {{{arg}}}"
'''


def _tool_result(request: dict[str, Any]) -> dict[str, Any]:
    block = request["messages"][-1]["content"][0]
    assert block["type"] == "tool_result"
    return dict(json.loads(block["content"]))


def test_a_client_side_tool_runs_on_the_client_and_the_model_reads_its_output(claude: Letta, mock_llm: MockLLM) -> None:
    tool = claude.tools.upsert(source_code=RUN_LOCAL_COMMAND, default_requires_approval=True)
    agent = claude.agents.create(
        name="local-executor",
        model=MODEL,
        embedding=EMBEDDING,
        tools=[tool.name],
        memory_blocks=[
            {"label": "persona", "value": "I help users run commands on their local machine."},
            {"label": "human", "value": "User wants to execute local commands."},
        ],
    )
    mock_llm.script(
        Reply.tool_call("run_local_command", {"command": "ls"}, reasoning="I'll list the files."),
        Reply.text("The directory holds notes.txt."),
    )
    response = claude.agents.messages.create(
        agent_id=agent.id, messages=[{"role": "user", "content": "List files in current directory"}]
    )
    kinds = [m.message_type for m in response.messages]
    assert kinds == ["reasoning_message", "approval_request_message"]
    request = response.messages[1]
    assert request.message_type == "approval_request_message"
    assert request.tool_call.name == "run_local_command"
    assert json.loads(request.tool_call.arguments) == {"command": "ls"}

    answer = claude.agents.messages.create(
        agent_id=agent.id,
        messages=[
            {
                "type": "approval",
                "approvals": [
                    {
                        "type": "tool",
                        "tool_call_id": request.tool_call.tool_call_id,
                        "tool_return": "notes.txt\n",
                        "status": "success",
                        "stdout": ["notes.txt"],
                        "stderr": [],
                    }
                ],
            }
        ],
    )
    said = [m.content for m in answer.messages if m.message_type == "assistant_message"]
    assert said == ["The directory holds notes.txt."]
    sent = _tool_result(mock_llm.requests[-1])
    assert (sent["status"], sent["message"]) == ("OK", "notes.txt\n")


def test_a_tool_rule_pipeline_offers_one_tool_per_step_and_stops_after_the_last(
    claude: Letta, mock_llm: MockLLM
) -> None:
    fetch = claude.tools.create(source_code=_pipeline_tool("fetch_data", "query", "Fetched data for"))
    process = claude.tools.create(source_code=_pipeline_tool("process_data", "data", "Processed"))
    fmt = claude.tools.create(source_code=_pipeline_tool("format_output", "processed", "Final output"))
    agent = claude.agents.create(
        name="pipeline-agent",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "persona", "value": "I process data in a strict pipeline."}],
        tool_ids=[fetch.id, process.id, fmt.id],
        tool_rules=[
            {"type": "run_first", "tool_name": "fetch_data"},
            {"type": "constrain_child_tools", "tool_name": "fetch_data", "children": ["process_data"]},
            {"type": "constrain_child_tools", "tool_name": "process_data", "children": ["format_output"]},
            {"type": "exit_loop", "tool_name": "format_output"},
        ],
    )
    mock_llm.script(
        Reply.tool_call("fetch_data", {"query": "AI agents"}),
        Reply.tool_call("process_data", {"data": "Fetched data for: AI agents"}),
        Reply.tool_call("format_output", {"processed": "Processed: Fetched data for: AI agents"}),
        Reply.text("never asked for"),
    )
    response = claude.agents.messages.create(
        agent_id=agent.id, messages=[{"role": "user", "content": "Process data about 'AI agents'"}]
    )
    calls = [m.tool_call.name for m in response.messages if m.message_type == "tool_call_message"]
    returns = [m.tool_return for m in response.messages if m.message_type == "tool_return_message"]
    assert calls == ["fetch_data", "process_data", "format_output"]
    assert returns[-1] == "Final output: Processed: Fetched data for: AI agents"
    assert not [m for m in response.messages if m.message_type == "assistant_message"]
    offered = [[t["name"] for t in r["tools"]] for r in mock_llm.requests]
    assert offered == [["fetch_data"], ["process_data"], ["format_output"]]
    assert {json.dumps(r["tool_choice"]) for r in mock_llm.requests} == {
        json.dumps({"type": "auto", "disable_parallel_tool_use": True})
    }


def test_a_tool_whose_docstring_names_no_args_is_refused_with_a_400(claude: Letta) -> None:
    source = '''
def fetch_data(query: str) -> str:
    """Fetch data based on a query. Must be called first."""
    return f"Fetched data for: {query}"
'''
    with pytest.raises(BadRequestError) as refused:
        claude.tools.create(source_code=source)
    assert refused.value.body == {
        "detail": "Failed to derive json schema: Schema generation failed: Value error in schema generation: "
        "Parameter 'query' in function 'fetch_data' lacks a description in the docstring"
    }
