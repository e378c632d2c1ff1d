"""What Letta 0.16.8's `tests/managers/test_job_manager.py` pins down that a user of ``/v1/jobs`` sees: the list's
cursors must name jobs (of any type, a batch job too), else a 400 naming the id; ``before`` may not be older than
``after``."""

import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MISSING = "job-00000000-0000-4000-8000-000000000000"


def ended_batch(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> dict[str, Any]:
    mock_llm.script(Reply.text("ok"))
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    batch = http.post("/v1/messages/batches", json={"requests": [{"agent_id": agent.id, "input": "hi"}]}).json()
    deadline = time.monotonic() + 20
    while http.get(f"/v1/jobs/{batch['id']}").json()["status"] in ("created", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return dict(http.get(f"/v1/jobs/{batch['id']}").json())


@pytest.mark.parametrize("path", ["/v1/jobs/", "/v1/jobs/active"])
@pytest.mark.parametrize("cursor", ["before", "after"])
def test_a_cursor_naming_no_job_is_a_400(http: httpx.Client, path: str, cursor: str) -> None:
    response = http.get(path, params={cursor: MISSING})
    assert response.status_code == 400
    assert response.json() == {"detail": f"Job with id {MISSING} not found"}


def test_a_batch_job_is_a_cursor_and_before_may_not_be_older_than_after(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    older, newer = ended_batch(http, client, mock_llm), ended_batch(http, client, mock_llm)
    mock_llm.reset()
    assert http.get("/v1/jobs/", params={"after": older["id"]}).json() == []
    assert http.get("/v1/jobs/", params={"before": newer["id"], "after": older["id"]}).json() == []
    response = http.get("/v1/jobs/", params={"before": older["id"], "after": newer["id"]})
    assert response.status_code == 400
    assert response.json() == {"detail": "'before' reference must be later than 'after' reference"}


def test_a_missing_job_is_a_404_with_letta_s_text_per_route(http: httpx.Client) -> None:
    read = {"detail": f"Job not found with identifier {MISSING}"}
    assert (http.get(f"/v1/jobs/{MISSING}").status_code, http.get(f"/v1/jobs/{MISSING}").json()) == (404, read)
    cancelled = http.patch(f"/v1/jobs/{MISSING}/cancel")
    assert (cancelled.status_code, cancelled.json()) == (404, read)
    deleted = http.delete(f"/v1/jobs/{MISSING}")
    assert deleted.status_code == 404
    assert deleted.json() == {"detail": f"Job with id {MISSING} does not exist or user does not have access"}
