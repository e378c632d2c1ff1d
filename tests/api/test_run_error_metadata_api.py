"""A failed run's `metadata.error`, as Letta writes it: the error message a stream ended with (Letta Code reads its
`error_type` and `detail` to decide whether to retry a turn), or a blocking run's error text."""

import json
import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_messages_api import make_agent, send, sse_events
from tests.mock_llm import MockLLM, Reply


def streamed_error(response: httpx.Response) -> dict[str, Any]:
    [data] = [data for name, data in sse_events(response.text) if name == "error"]
    error: dict[str, Any] = json.loads(data)
    return error


def run_error(client: Letta, run_id: str) -> Any:
    run = client.runs.retrieve(run_id)
    assert run.status == "failed"
    return (run.metadata or {})["error"]


@pytest.mark.parametrize(
    ("status", "error_type"), [(401, "llm_authentication"), (400, "llm_error"), (429, "llm_rate_limit")]
)
def test_a_streamed_runs_error_is_the_error_message_it_streamed(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, status: int, error_type: str
) -> None:
    mock_llm.reset()
    agent = make_agent(client)
    mock_llm.script(Reply.error(status, times=10, message="the provider said no"))
    response = http.post(f"/v1/agents/{agent.id}/messages/stream", json={"input": "x", "stream_tokens": True})
    streamed = streamed_error(response)
    error = run_error(client, streamed["run_id"])
    assert error == {**streamed, "seq_id": None}
    assert (error["message_type"], error["error_type"]) == ("error_message", error_type)
    assert "the provider said no" in error["detail"]


def test_a_background_conversation_runs_error_carries_its_type_and_detail(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """Letta Code's turn: a background stream in a conversation; after the stream it retrieves the run and reads
    `metadata.error.error_type` / `.detail` (a rejected key is not retried)."""
    mock_llm.reset()
    agent = make_agent(client)
    conversation = http.post("/v1/conversations/", params={"agent_id": agent.id}, json={}).json()
    mock_llm.script(Reply.error(401, times=10, message="Incorrect API key provided"))
    body = {"messages": [{"role": "user", "content": "x"}], "streaming": True, "background": True}
    response = http.post(f"/v1/conversations/{conversation['id']}/messages", json=body)
    streamed = streamed_error(response)
    assert isinstance(streamed["seq_id"], int)  # a background stream numbers its chunks; the record has none
    error = run_error(client, streamed["run_id"])
    assert error["error_type"] == "llm_authentication"
    assert "Incorrect API key provided" in error["detail"]
    assert error == {**streamed, "seq_id": None}
    # In the error message's field order, as Letta stored it: Letta Code prints this object as it comes.
    shown = http.get(f"/v1/runs/{streamed['run_id']}").json()["metadata"]["error"]
    assert list(shown) == ["message_type", "run_id", "error_type", "message", "detail", "seq_id"]


def test_a_blocking_runs_error_is_its_text(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = make_agent(client)
    mock_llm.script(Reply.error(400, times=10, message="the provider said no"))
    failed = send(http, agent.id, "x")
    assert failed.status_code == 400
    [run] = client.runs.list(agent_id=agent.id)
    error = run_error(client, run.id)
    assert isinstance(error, str) and error == failed.json()["error"]["detail"]
    assert "the provider said no" in error


def ended_run(http: httpx.Client, run_id: str) -> dict[str, Any]:
    for _ in range(200):
        run: dict[str, Any] = http.get(f"/v1/runs/{run_id}").json()
        if run["status"] not in ("created", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end")


def test_metadata_keeps_its_key_order_with_the_error_last(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta keeps a run's metadata in a json column and merges the error in as ``{**old, "error": ...}``."""
    mock_llm.reset()
    agent = make_agent(client)
    mock_llm.script(Reply.error(400, times=10, message="no"))
    started = http.post(f"/v1/agents/{agent.id}/messages/async", json={"input": "x"}).json()
    assert list(started["metadata"]) == ["run_type", "lettuce"]
    run = ended_run(http, started["id"])
    assert (run["status"], list(run["metadata"])) == ("failed", ["run_type", "lettuce", "error"])
    assert run["metadata"]["run_type"] == "send_message_async" and run["metadata"]["lettuce"] is False
    streamed = http.post(f"/v1/agents/{agent.id}/messages/stream", json={"input": "x"})
    error = streamed_error(streamed)
    assert list(http.get(f"/v1/runs/{error['run_id']}").json()["metadata"]) == ["run_type", "error"]
