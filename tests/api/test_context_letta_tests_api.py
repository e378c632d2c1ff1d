"""What Letta 0.16.8's test_context_window_calculator.py pins, seen through `GET /v1/agents/{id}/context`: the
system message is reported in its sections (the tool rules and an attached folder's `<directories>` apart from the
core memory, each with its own count, all adding up to the current size).

Where memlet differs on purpose, the report is what the model reads. Its system message is the stored one, the
prompt the next request sends; Letta reported a dry-run recompile instead (the current time as "last
recompiled", and a tool-rule section the stored prompt of a new agent does not have yet). Its tools are the ones
the request carries (a memgpt agent's with `thinking` and `request_heartbeat`); Letta listed their stored schemas.
"""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "Name: Ada"}]


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def report(http: httpx.Client, agent_id: str) -> dict[str, Any]:
    response = http.get(f"/v1/agents/{agent_id}/context")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_rules_and_directories_are_sections_of_their_own(client: Letta, http: httpx.Client) -> None:
    rules = [{"type": "max_count_per_step", "tool_name": "conversation_search", "max_count_limit": 2}]
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS, tool_rules=rules)  # type: ignore[arg-type]
    folder = client.folders.create(name="handbook", embedding=EMBEDDING)
    client.agents.folders.attach(folder.id, agent_id=agent.id)
    http.post(f"/v1/agents/{agent.id}/recompile").raise_for_status()  # a new agent's prompt has no rules yet
    got = report(http, agent.id)
    assert got["tool_usage_rules"].startswith("<tool_usage_rules>")
    assert "conversation_search" in got["tool_usage_rules"] and got["num_tokens_tool_usage_rules"] > 0
    assert got["directories"].startswith("<directories>") and got["num_tokens_directories"] > 0
    assert '<directory name="handbook">' in got["directories"]
    assert "Name: Ada" in got["core_memory"]
    for section in ("<tool_usage_rules>", "<directories>", "<memory_metadata>"):
        assert section not in got["core_memory"] and section not in got["system_prompt"]
    assert got["memory_filesystem"] is None and got["num_tokens_memory_filesystem"] == 0
    parts = sum(v for k, v in got.items() if k.startswith("num_tokens_"))
    assert got["context_window_size_current"] == parts


def test_the_system_message_is_the_one_the_model_reads(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    rules = [{"type": "max_count_per_step", "tool_name": "conversation_search", "max_count_limit": 2}]
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS, tool_rules=rules)  # type: ignore[arg-type]
    mock_llm.script(Reply.text("Hi!"))
    client.agents.messages.create(agent.id, input="hello")
    sent = mock_llm.requests[-1]["messages"][0]["content"]
    got = report(http, agent.id)
    assert got["messages"][0]["content"][0]["text"] == sent
    assert sent.endswith(got["external_memory_summary"])  # its "last recompiled" time, not the report's
    assert got["tool_usage_rules"] is None and "<tool_usage_rules>" not in sent  # as Letta stores a new agent's
    http.post(f"/v1/agents/{agent.id}/recompile").raise_for_status()
    assert report(http, agent.id)["tool_usage_rules"] is not None


@pytest.mark.parametrize("agent_type", ["letta_v1_agent", "memgpt_v2_agent"])
def test_tools_are_reported_as_the_model_gets_them(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, agent_type: str
) -> None:
    agent = client.agents.create(agent_type=agent_type, model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]
    if agent_type == "memgpt_v2_agent":
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet.", "message": "Hi!"}))
    else:
        mock_llm.script(Reply.text("Hi!"))
    client.agents.messages.create(agent.id, input="hello")
    sent = sorted(mock_llm.requests[-1]["tools"], key=lambda t: t["function"]["name"])
    reported = sorted(report(http, agent.id)["functions_definitions"], key=lambda t: t["function"]["name"])
    assert reported == sent
    if agent_type == "memgpt_v2_agent":
        search = next(t for t in reported if t["function"]["name"] == "conversation_search")
        assert {"thinking", "request_heartbeat"} <= set(search["function"]["parameters"]["properties"])


def test_conversation_id_names_a_thread_of_the_agent(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]
    mock_llm.script(Reply.text("Hi!"))
    client.agents.messages.create(agent.id, input="hello")
    own = report(http, agent.id)
    assert own["num_messages"] == 3
    default = http.get(f"/v1/agents/{agent.id}/context", params={"conversation_id": "default"}).json()
    assert default["num_messages"] == 3 and default["messages"] == own["messages"]  # Letta: the system message alone
    unknown = "conv-00000000-0000-4000-8000-000000000000"
    missing = http.get(f"/v1/agents/{agent.id}/context", params={"conversation_id": unknown})
    assert missing.status_code == 404  # Letta: 200, a report of the system message alone
    assert missing.json() == {"detail": f"Conversation with ID {unknown} not found"}


def test_a_prompt_that_opens_with_its_memory_reports_the_written_base_prompt(client: Letta, http: httpx.Client) -> None:
    base = "{CORE_MEMORY}\nAnswer in one word."
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS, system=base)  # type: ignore[arg-type]
    got = report(http, agent.id)
    assert got["messages"][0]["content"][0]["text"].startswith("<memory_blocks>")  # nothing before the first section
    assert got["system_prompt"] == base and got["num_tokens_system"] > 0  # as Letta reports it
    assert got["context_window_size_current"] == sum(v for k, v in got.items() if k.startswith("num_tokens_"))
