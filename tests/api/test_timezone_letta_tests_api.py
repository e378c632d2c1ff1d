"""What Letta 0.16.8's test_timezone_formatting.py pins, seen through the API: the clock the model reads (the `time`
of a packed tool result, the memory metadata's "last recompiled") is in the agent's `timezone`, a name Letta's
pytz looks up in any letter case. A name no zone has is refused when the agent is created, updated or imported
from an agent file (Letta accepted it and failed with a 500 compiling the prompt); one stored before is read as
UTC, so a turn never fails.
"""

import json
import re
from typing import Any

import httpx
import pytest
from letta_client import BadRequestError, Letta

from tests.api.agent_files_support import export
from tests.api.test_security_secrets import sql
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "Name: Ada"}]
EASTERN = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [AP]M E[SD]T-0[45]00$")
UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [AP]M UTC\+0000$")


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def tool_result_time(client: Letta, mock_llm: MockLLM, agent_id: str) -> str:
    """Send one turn whose first step calls memory_insert; the `time` of the tool result the model read next."""
    call = {"label": "human", "new_string": "Likes tea.", "insert_line": -1}
    mock_llm.script(Reply.tool_call("memory_insert", call), Reply.text("Noted."))
    client.agents.messages.create(agent_id, input="I like tea.")
    tool = next(m for m in mock_llm.requests[-1]["messages"] if m["role"] == "tool")
    return str(json.loads(tool["content"])["time"])


def last_recompiled(mock_llm: MockLLM) -> str:
    system = mock_llm.requests[-1]["messages"][0]["content"]
    return str(re.search(r"System prompt last recompiled: (.*)", system).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("timezone", ["America/New_York", "america/new_york", "US/Eastern"])
def test_the_model_reads_the_clock_in_the_agents_timezone(client: Letta, mock_llm: MockLLM, timezone: str) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS, timezone=timezone)  # type: ignore[arg-type]
    assert agent.timezone == timezone  # kept as given
    assert EASTERN.match(tool_result_time(client, mock_llm, agent.id))
    assert EASTERN.match(last_recompiled(mock_llm))


@pytest.mark.parametrize("agent_type", ["letta_v1_agent", "memgpt_v2_agent"])
def test_an_unknown_timezone_is_a_400_on_create_and_update(client: Letta, http: httpx.Client, agent_type: str) -> None:
    body: dict[str, Any] = {
        "agent_type": agent_type,
        "model": MODEL,
        "embedding": EMBEDDING,
        "timezone": "Mars/Olympus",
    }
    created = http.post("/v1/agents/", json=body)
    assert created.status_code == 400, created.text
    assert "Mars/Olympus" in created.json()["detail"]
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, timezone="Europe/Paris")  # type: ignore[arg-type]
    with pytest.raises(BadRequestError, match="Mars/Olympus"):
        client.agents.update(agent.id, timezone="Mars/Olympus")
    assert client.agents.retrieve(agent.id).timezone == "Europe/Paris"


def test_an_agent_file_with_an_unknown_timezone_is_a_400(client: Letta, http: httpx.Client) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    exported = export(http, agent.id)
    exported["agents"][0]["timezone"] = "Mars/Olympus"
    files = {"file": ("agent.af", json.dumps(exported).encode(), "application/json")}
    response = http.post("/v1/agents/import", files=files)
    assert response.status_code == 400 and "Mars/Olympus" in response.json()["detail"]
    assert [a.id for a in client.agents.list().items] == [agent.id]  # nothing imported


def test_a_stored_unknown_timezone_reads_as_utc(client: Letta, mock_llm: MockLLM, pg_uri: str) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]
    sql(pg_uri, f"UPDATE agents SET timezone = 'Mars/Olympus' WHERE id = '{agent.id}'")
    assert UTC.match(tool_result_time(client, mock_llm, agent.id))  # the turn ran (memlet failed it with a 500)
