"""``/v1/messages/batches``: each request is a normal turn of memlet's loop (the mock is an OpenAI-style provider,
which Letta 0.16.8 answered with a 500), run in the background, with Letta's callback when the batch ends.

letta-client 1.12.1 has no batch calls, so these go through httpx.
"""

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import free_port, start_server
from tests.api.test_run_callbacks import Receiver
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

# The callback receiver listens on loopback, which the outbound policy refuses: this module's server allows its port.
RECEIVER_PORT = free_port()


@pytest.fixture(scope="module")
def allowing_server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    with start_server(settings, pg_uri, allowed_hosts=f"127.0.0.1:{RECEIVER_PORT}") as server:
        yield server


@pytest.fixture
def server(allowing_server: LiveServer, pg_uri: str) -> Iterator[LiveServer]:
    yield allowing_server
    reset_database(pg_uri)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setattr("tests.api.test_run_callbacks.RECEIVER_PORT", RECEIVER_PORT)
    r = Receiver()
    yield r
    r.close()


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, name: str) -> str:
    agent = client.agents.create(
        name=name,
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        memory_blocks=[{"label": "human", "value": "Bob"}],  # type: ignore[list-item]
    )
    return str(agent.id)


def wait_for(http: httpx.Client, batch_id: str, status: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch = dict(http.get(f"/v1/messages/batches/{batch_id}").json())
        if batch["status"] == status:
            return batch
        time.sleep(0.05)
    raise AssertionError(f"batch {batch_id} never reached {status}: {batch}")


def runs_of(http: httpx.Client, agent_id: str) -> list[dict[str, Any]]:
    return list(http.get("/v1/runs/", params={"agent_id": agent_id}).json())


def test_batch_runs_every_request_as_a_turn_and_calls_back(
    http: httpx.Client, client: Letta, mock_llm: MockLLM, receiver: Receiver
) -> None:
    a, b = make_agent(client, "batch-a"), make_agent(client, "batch-b")
    mock_llm.script(Reply.delay(0.5, Reply.text("Batch reply")), Reply.delay(0.5, Reply.text("Batch reply")))
    response = http.post(
        "/v1/messages/batches",
        json={
            "requests": [
                {"agent_id": a, "messages": [{"role": "user", "content": "hello from the batch to A"}]},
                {"agent_id": b, "input": "hello from the batch to B"},
            ],
            "callback_url": receiver.url,
        },
    )
    assert response.status_code == 200, response.text
    created = response.json()
    assert created["id"].startswith("job-") and created["job_type"] == "batch"
    assert created["status"] == "running" and created["metadata"] == {"job_type": "batch_messages"}
    assert created["callback_url"] == receiver.url
    # In progress: listed (List shows created and running batches only).
    assert [j["id"] for j in http.get("/v1/messages/batches").json()] == [created["id"]]

    done = wait_for(http, created["id"], "completed")
    assert done["completed_at"] is not None and "+" not in done["completed_at"]
    assert http.get("/v1/messages/batches").json() == []

    # Both agents took a normal turn: input and reply are in their histories, under a completed batch run.
    for agent_id, text in ((a, "hello from the batch to A"), (b, "hello from the batch to B")):
        history = client.agents.messages.list(agent_id=agent_id, order="asc")
        kinds = [(m.message_type, getattr(m, "content", None)) for m in history]
        assert ("user_message", text) in kinds and ("assistant_message", "Batch reply") in kinds
        [run] = runs_of(http, agent_id)
        assert run["status"] == "completed" and run["metadata"]["batch_id"] == created["id"]
        assert run["background"] is True and run["callback_url"] is None
    assert len(mock_llm.requests) == 2

    # The callback: Letta's body, sent once, recorded on the job.
    deadline = time.monotonic() + 10
    while not receiver.received and time.monotonic() < deadline:
        time.sleep(0.05)
    [(_, payload)] = receiver.received
    assert payload == {"job_id": created["id"], "status": "completed", "completed_at": payload["completed_at"]}
    recorded = http.get(f"/v1/messages/batches/{created['id']}").json()
    assert recorded["callback_status_code"] == 200 and recorded["callback_sent_at"] is not None

    # The batch's messages: raw Message objects of both runs, filterable by agent.
    messages = http.get(f"/v1/messages/batches/{created['id']}/messages").json()["messages"]
    assert {m["agent_id"] for m in messages} == {a, b} and {m["role"] for m in messages} >= {"user", "assistant"}
    only_a = http.get(f"/v1/messages/batches/{created['id']}/messages", params={"agent_id": a}).json()["messages"]
    assert only_a and {m["agent_id"] for m in only_a} == {a}
    oldest = http.get(f"/v1/messages/batches/{created['id']}/messages", params={"order": "asc", "limit": 1}).json()
    assert oldest["messages"][0]["role"] == "user"


def test_requests_for_one_agent_run_one_after_another(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    a = make_agent(client, "batch-serial")
    mock_llm.script(Reply.text("first"), Reply.text("second"))
    body = {"requests": [{"agent_id": a, "input": "one"}, {"agent_id": a, "input": "two"}]}
    created = http.post("/v1/messages/batches", json=body).json()
    wait_for(http, created["id"], "completed")
    history = [m for m in client.agents.messages.list(agent_id=a, order="asc") if m.message_type != "system_message"]
    texts = [getattr(m, "content", None) for m in history if m.message_type in ("user_message", "assistant_message")]
    assert texts == ["one", "first", "two", "second"]
    assert sorted(r["status"] for r in runs_of(http, a)) == ["completed", "completed"]


def test_cancel_stops_the_running_turn_and_skips_the_rest(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    a = make_agent(client, "batch-cancel")
    mock_llm.script(Reply.delay(1.5, Reply.text("too late")))
    body = {"requests": [{"agent_id": a, "input": "slow one"}, {"agent_id": a, "input": "never sent"}]}
    created = http.post("/v1/messages/batches", json=body).json()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.02)

    cancelled = http.patch(f"/v1/messages/batches/{created['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json() is None
    assert http.get(f"/v1/messages/batches/{created['id']}").json()["status"] == "cancelled"
    assert http.get("/v1/messages/batches").json() == []

    deadline = time.monotonic() + 10
    while any(r["status"] in ("created", "running") for r in runs_of(http, a)) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert [r["status"] for r in runs_of(http, a)] == ["cancelled", "cancelled"]
    assert len(mock_llm.requests) == 1  # the second request never reached the model
    inputs = [
        getattr(m, "content", None) for m in client.agents.messages.list(agent_id=a) if m.message_type == "user_message"
    ]
    assert "never sent" not in inputs
    # A cancelled batch stays cancelled (its driver does not close it as completed).
    assert http.get(f"/v1/messages/batches/{created['id']}").json()["status"] == "cancelled"


def test_bad_batches_are_refused_before_anything_is_written(http: httpx.Client, client: Letta) -> None:
    a = make_agent(client, "batch-checks")
    ghost = "agent-00000000-0000-4000-8000-000000000000"
    unknown = http.post(
        "/v1/messages/batches", json={"requests": [{"agent_id": a, "input": "x"}, {"agent_id": ghost, "input": "y"}]}
    )
    assert unknown.status_code == 404 and ghost in unknown.json()["detail"]
    empty = http.post("/v1/messages/batches", json={"requests": []})
    assert empty.status_code == 400 and "at least one request" in empty.json()["detail"]
    no_input = http.post("/v1/messages/batches", json={"requests": [{"agent_id": a, "messages": []}]})
    assert no_input.status_code == 422
    blocked = http.post(
        "/v1/messages/batches",
        json={"requests": [{"agent_id": a, "input": "x"}], "callback_url": "http://169.254.169.254/latest"},
    )
    assert blocked.status_code == 400 and "callback_url" in blocked.json()["detail"]
    not_a_url = http.post(
        "/v1/messages/batches", json={"requests": [{"agent_id": a, "input": "x"}], "callback_url": "nope"}
    )
    assert not_a_url.status_code == 422
    # A malformed agent id is Letta's 422 on the body field (its `AgentId`), not a 404 lookup.
    malformed = http.post(
        "/v1/messages/batches",
        json={"requests": [{"agent_id": a, "input": "x"}, {"agent_id": "agent-1", "input": "y"}]},
    )
    assert malformed.status_code == 422
    assert "('body', 'requests', 1, 'agent_id')" in malformed.json()["detail"]
    assert runs_of(http, a) == []


def test_unknown_and_malformed_batch_ids(http: httpx.Client) -> None:
    missing = "job-00000000-0000-4000-8000-000000000000"
    assert http.get(f"/v1/messages/batches/{missing}").status_code == 404
    assert http.get(f"/v1/messages/batches/{missing}/messages").status_code == 404
    assert http.patch(f"/v1/messages/batches/{missing}/cancel").status_code == 404
    bad = http.get("/v1/messages/batches/nope")
    assert bad.status_code == 400 and "Invalid job ID format" in bad.json()["detail"]
