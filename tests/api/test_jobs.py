"""``/v1/jobs``: the legacy job routes. Memlet, like Letta 0.16.8, creates no ``job``-type jobs, so the lists are
empty; batch jobs are reachable by id (retrieve, cancel, delete)."""

import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MISSING = "job-00000000-0000-4000-8000-000000000000"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def start_batch(http: httpx.Client, client: Letta) -> dict[str, Any]:
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    response = http.post("/v1/messages/batches", json={"requests": [{"agent_id": agent.id, "input": "hi"}]})
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_until_ended(http: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        job = dict(http.get(f"/v1/jobs/{job_id}").json())
        if job["status"] not in ("created", "running"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end")


def test_lists_hold_only_job_type_jobs(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.delay(1.0, Reply.text("ok")))
    batch = start_batch(http, client)
    assert http.get("/v1/jobs/").json() == []
    assert http.get("/v1/jobs/", params={"active": True, "order": "asc"}).json() == []
    assert http.get("/v1/jobs/active").json() == []
    # The batch itself is listed by the batch routes while it runs.
    assert [j["id"] for j in http.get("/v1/messages/batches").json()] == [batch["id"]]
    wait_until_ended(http, batch["id"])


def test_retrieve_a_batch_job(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("ok"))
    batch = start_batch(http, client)
    job = wait_until_ended(http, batch["id"])
    assert job["id"] == batch["id"] and job["job_type"] == "batch" and job["status"] == "completed"
    assert list(job) == [
        "created_by_id",
        "last_updated_by_id",
        "created_at",
        "updated_at",
        "status",
        "completed_at",
        "stop_reason",
        "metadata",
        "job_type",
        "background",
        "agent_id",
        "callback_url",
        "callback_sent_at",
        "callback_status_code",
        "callback_error",
        "ttft_ns",
        "total_duration_ns",
        "id",
    ]
    assert job["callback_url"] is None  # never the string "None" (Letta stored it so)


def test_cancel_an_active_job_and_an_ended_one(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.delay(1.0, Reply.text("ok")))
    batch = start_batch(http, client)
    cancelled = http.patch(f"/v1/jobs/{batch['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["completed_at"] is not None

    mock_llm.script(Reply.text("ok"))
    other = start_batch(http, client)
    ended = wait_until_ended(http, other["id"])
    again = http.patch(f"/v1/jobs/{other['id']}/cancel")  # Letta: False into a Job model, a 500
    assert again.status_code == 200 and again.json()["status"] == ended["status"] == "completed"


def test_delete_keeps_the_runs(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("ok"))
    batch = start_batch(http, client)
    wait_until_ended(http, batch["id"])
    deleted = http.delete(f"/v1/jobs/{batch['id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == batch["id"]
    assert http.get(f"/v1/jobs/{batch['id']}").status_code == 404
    runs = http.get("/v1/runs/").json()
    assert [r["metadata"]["batch_id"] for r in runs] == [batch["id"]]


def test_job_ids_are_checked(http: httpx.Client) -> None:
    assert http.get(f"/v1/jobs/{MISSING}").status_code == 404
    assert http.patch(f"/v1/jobs/{MISSING}/cancel").status_code == 404
    assert http.delete(f"/v1/jobs/{MISSING}").status_code == 404
    assert http.get("/v1/jobs/run-00000000-0000-4000-8000-000000000000").status_code == 422
