"""Letta's run manager and cancellation tests (tests/managers/test_run_manager.py, test_cancellation.py,
tests/test_run_status_conversion.py), as a user sees them through the API: the run list's status filter."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


def make_agent(client: Letta, **extra: Any) -> Any:
    return client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", memory_blocks=BLOCKS, **extra
    )  # type: ignore[arg-type]


def send(http: httpx.Client, agent_id: str, text: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


@pytest.mark.parametrize("path", ["/v1/runs/", "/v1/_internal_runs/"])
def test_a_status_that_is_not_a_run_status_is_a_400_naming_it(http: httpx.Client, path: str) -> None:
    # test_convert_statuses_to_enum_with_invalid_status / _case_sensitivity / _with_mixed_valid_invalid: Letta's
    # route turns each status into its RunStatus enum, and the ValueError is its 400.
    for statuses in (["bogus"], ["COMPLETED"], ["completed", "bogus"]):
        response = http.get(path, params={"statuses": statuses})
        assert response.status_code == 400, response.text
        assert response.json() == {"detail": f"'{statuses[-1]}' is not a valid RunStatus"}


def test_several_statuses_select_runs_in_any_of_them(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    # test_list_runs_with_multiple_statuses / _with_no_status_filter_returns_all
    agent = make_agent(client)
    mock_llm.script(Reply.text("fine"), Reply.error(500, times=10))
    done = send(http, agent.id, "one").json()["messages"][0]["run_id"]
    send(http, agent.id, "two")
    failed = next(r.id for r in client.runs.list(agent_id=agent.id).items if r.id != done)
    listed = client.runs.list(agent_id=agent.id, statuses=["completed", "failed"]).items
    assert {r.id for r in listed} == {done, failed}
    assert [r.id for r in client.runs.list(agent_id=agent.id, statuses=["failed", "failed"]).items] == [failed]
    assert client.runs.list(agent_id=agent.id, statuses=["created", "running"]).items == []
    assert len(client.runs.list(agent_id=agent.id).items) == 2
