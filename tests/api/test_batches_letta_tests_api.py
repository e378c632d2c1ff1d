"""What a user of ``GET /v1/messages/batches`` sees, as Letta 0.16.8 answers it (its batch list is its job list with
the batch type and the created/running statuses): a cursor that names no job is a 400 naming the id, ``before`` may
not be older than ``after``, and an ended batch is a valid cursor though it is not listed itself.

letta-client 1.12.1 has no batch calls, so these go through httpx.
"""

import time

import httpx
import pytest
from letta_client import Letta

from tests.api.test_jobs_letta_tests_api import MISSING, ended_batch
from tests.mock_llm import MockLLM, Reply


@pytest.mark.parametrize("cursor", ["before", "after"])
def test_a_batch_list_cursor_naming_no_job_is_a_400(http: httpx.Client, cursor: str) -> None:
    response = http.get("/v1/messages/batches", params={cursor: MISSING})
    assert response.status_code == 400
    assert response.json() == {"detail": f"Job with id {MISSING} not found"}


def test_a_batch_list_before_older_than_after_is_a_400(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    older, newer = ended_batch(http, client, mock_llm), ended_batch(http, client, mock_llm)
    for order in ("asc", "desc"):
        response = http.get(
            "/v1/messages/batches", params={"before": older["id"], "after": newer["id"], "order": order}
        )
        assert response.status_code == 400
        assert response.json() == {"detail": "'before' reference must be later than 'after' reference"}
    # The other way round is a window, and ended batches are cursors while only active ones are listed.
    window = http.get("/v1/messages/batches", params={"before": newer["id"], "after": older["id"], "order": "asc"})
    assert window.status_code == 200 and window.json() == []


def test_only_active_batches_are_listed_and_an_ended_one_is_a_cursor(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    ended = ended_batch(http, client, mock_llm)
    mock_llm.reset()
    mock_llm.script(Reply.delay(1.5, Reply.text("slow")))
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    active = http.post("/v1/messages/batches", json={"requests": [{"agent_id": agent.id, "input": "hi"}]}).json()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.02)

    assert [b["id"] for b in http.get("/v1/messages/batches").json()] == [active["id"]]
    assert [
        b["id"] for b in http.get("/v1/messages/batches", params={"after": ended["id"], "order": "asc"}).json()
    ] == [active["id"]]
    assert http.get("/v1/messages/batches", params={"before": ended["id"], "order": "asc"}).json() == []
    assert http.get("/v1/messages/batches", params={"after": active["id"], "order": "asc"}).json() == []
    http.patch(f"/v1/messages/batches/{active['id']}/cancel")


def test_batch_messages_cursors_walk_the_batch_in_either_order(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    """Letta's ``after`` here was a 500 (it indexed the query result) and its ``before`` was ignored; memlet reads
    both relative to the order, as its other lists do (README compatibility notes)."""
    batch = ended_batch(http, client, mock_llm)
    url = f"/v1/messages/batches/{batch['id']}/messages"
    every = [m["id"] for m in http.get(url).json()["messages"]]
    assert len(every) >= 2
    for order, expected in (("desc", every), ("asc", every[::-1])):
        walked: list[str] = []
        params: dict[str, str | int] = {"order": order, "limit": 1}
        while page := http.get(url, params=params).json()["messages"]:
            walked.append(page[0]["id"])
            params["after"] = page[0]["id"]
        assert walked == expected
        back = http.get(url, params={"order": order, "before": expected[-1]}).json()["messages"]
        assert [m["id"] for m in back] == expected[:-1]
    unknown = "message-00000000-0000-4000-8000-000000000000"
    assert http.get(url, params={"after": unknown}).json() == {"messages": []}
