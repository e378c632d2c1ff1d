"""Cancelling a run that stopped for an approval: the run keeps the duration it stopped with, and its metrics count
it until the cancel, as Letta's run manager recomputes `run_ns` (now - start) on every terminal update."""

import threading
import time

import httpx
from letta_client import Letta

from tests.api.test_approvals_sdk import MULTIPLY, ask_and_expect_approval, make_agent
from tests.mock_llm import MockLLM, Reply


def test_cancel_at_an_approval_counts_the_wait_in_the_metrics(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    mock_llm.reset()
    tool = client.tools.create(source_code=MULTIPLY, default_requires_approval=True)
    agent = make_agent(client, tool_ids=[tool.id])
    ask_and_expect_approval(client, mock_llm, agent.id, Reply.tool_call("multiply", {"a": 2, "b": 3}))
    [waiting] = http.get("/v1/runs/", params={"agent_id": agent.id}).json()
    stopped = waiting["total_duration_ns"]
    assert stopped and http.get(f"/v1/runs/{waiting['id']}/metrics").json()["run_ns"] == stopped
    time.sleep(0.5)
    cancelled = http.post(f"/v1/agents/{agent.id}/messages/cancel", json={"run_ids": [waiting["id"]]})
    assert cancelled.json() == {waiting["id"]: "cancelled"}
    run = http.get(f"/v1/runs/{waiting['id']}").json()
    assert (run["status"], run["total_duration_ns"]) == ("cancelled", stopped)
    counted = http.get(f"/v1/runs/{waiting['id']}/metrics").json()["run_ns"]
    assert counted >= stopped + 500_000_000
    assert counted < stopped + 30_000_000_000


def test_a_step_cancelled_mid_call_names_its_cause(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """memlet's side of a README note: the step reads failed with stop reason `cancelled` and error type
    `RunCancelled`; Letta's loop never saw the cancellation as an `Exception` and wrote `Unknown` / "Unknown error"."""
    mock_llm.reset()
    agent = make_agent(client)
    mock_llm.script(Reply.delay(5, Reply.text("too late")))
    reader = threading.Thread(target=lambda: list(client.agents.messages.stream(agent.id, input="slow")))
    reader.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    [run_id] = client.agents.messages.cancel(agent.id)  # type: ignore[misc]
    reader.join(10)
    [step] = http.get(f"/v1/runs/{run_id}/steps").json()
    assert (step["status"], step["stop_reason"], step["error_type"]) == ("failed", "cancelled", "RunCancelled")
