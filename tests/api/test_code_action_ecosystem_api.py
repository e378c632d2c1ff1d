"""letta-code-action (letta-ai/letta-code-action), the GitHub Action that runs Letta Code headless on issues and
PRs, against memlet: the Letta API calls its own code makes (`src/letta/client.ts`), with raw `fetch` and a bearer
key, sent here with httpx in the same shapes and order.

- Before a run (`modes/agent`): `findConversationBySummary` lists `GET /v1/conversations/?agent_id=&summary_search=
  <owner/repo/issue-N>&limit=1&order=desc` and keeps only a conversation whose `summary` is exactly that label.
- When Letta Code's stream-json `init` event names a new conversation (`runner/run-letta.ts`), the runner reads the
  agent's `name` (`GET /v1/agents/{id}`) for the GitHub comment and, without waiting, labels the conversation with
  `PATCH /v1/conversations/{id}` `{"summary": ...}` while the turn runs; the next run finds it and passes
  `--conversation`. When the CLI printed no conversation id, `getLatestConversation` lists `limit=1&order=desc`.
- Every failure (non-2xx) is logged and read as "nothing found", so a 404 must stay a 404.

Letta Code's own traffic (creating the agent and conversation, the streamed turn) is covered by test_letta_code.py.
"""

import threading
import time
from typing import Any

import httpx

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

AUTH = {"Authorization": "Bearer sk-action"}  # the action always sends LETTA_API_KEY; no password here
MODEL = "openai/gpt-4o-mini"
MISSING_AGENT = "agent-00000000-0000-4000-8000-000000000000"


def find_by_summary(http: httpx.Client, agent_id: str, summary: str) -> str | None:
    """`findConversationBySummary`: the server's substring search, then an exact match on the client."""
    params = {"agent_id": agent_id, "summary_search": summary, "limit": "1", "order": "desc"}
    response = http.get("/v1/conversations/", params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    return next((c["id"] for c in response.json() if c["summary"] == summary), None)


def latest(http: httpx.Client, agent_id: str) -> str | None:
    """`getLatestConversation`, URL as the action writes it."""
    response = http.get(f"/v1/conversations/?agent_id={agent_id}&limit=1&order=desc", headers=AUTH)
    assert response.status_code == 200, response.text
    return response.json()[0]["id"] if response.json() else None


def label(http: httpx.Client, conversation_id: str, summary: str) -> dict[str, Any]:
    """`updateConversationSummary`; the action reads `id` and `summary` back."""
    response = http.patch(f"/v1/conversations/{conversation_id}", json={"summary": summary}, headers=AUTH)
    assert response.status_code == 200, response.text
    return dict(response.json())


def new_conversation(http: httpx.Client, agent_id: str) -> str:
    """What `letta --agent <id> --new` does before its first turn."""
    response = http.post(f"/v1/conversations/?agent_id={agent_id}", json={}, headers=AUTH)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def test_a_labelled_conversation_is_found_again_by_the_next_run(http: httpx.Client) -> None:
    agent = http.post("/v1/agents/", json={"name": "acme-bot", "model": MODEL}, headers=AUTH).json()
    assert http.get(f"/v1/agents/{agent['id']}", headers=AUTH).json()["name"] == "acme-bot"
    summary = "acme/app/issue-7"
    assert find_by_summary(http, agent["id"], summary) is None  # first mention: a new conversation
    assert latest(http, agent["id"]) is None

    conversation_id = new_conversation(http, agent["id"])
    labelled = label(http, conversation_id, summary)
    assert (labelled["id"], labelled["summary"]) == (conversation_id, summary)
    assert find_by_summary(http, agent["id"], summary) == conversation_id  # the follow-up resumes it
    assert latest(http, agent["id"]) == conversation_id

    # The search is a substring one, newest first, cut to one row: a newer `issue-70` hides `issue-7` from the
    # action's exact match, as on Letta (the action then starts a new conversation).
    newer = new_conversation(http, agent["id"])
    label(http, newer, "acme/app/issue-70")
    assert find_by_summary(http, agent["id"], summary) is None
    assert find_by_summary(http, agent["id"], "acme/app/issue-70") == newer
    assert latest(http, agent["id"]) == newer


def test_what_the_action_reads_as_nothing_found(http: httpx.Client) -> None:
    missing = http.get(f"/v1/agents/{MISSING_AGENT}", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json() == {"detail": f"Agent with ID {MISSING_AGENT} not found"}
    gone = "conv-00000000-0000-4000-8000-000000000000"
    patched = http.patch(f"/v1/conversations/{gone}", json={"summary": "acme/app/pr-1"}, headers=AUTH)
    assert patched.status_code == 404
    assert patched.json() == {"detail": f"Conversation with ID {gone} not found"}
    assert latest(http, MISSING_AGENT) is None  # an unknown agent lists nothing, as in Letta (no 404)
    assert find_by_summary(http, MISSING_AGENT, "acme/app/pr-1") is None


def test_a_summary_search_matches_like_wildcards_literally(http: httpx.Client) -> None:
    """memlet's side of a README compatibility note: Letta passed `summary_search` to SQL `LIKE`, where `_` and
    `%` match any character(s) and `\\` escapes the next one."""
    agent = http.post("/v1/agents/", json={"name": "acme-bot", "model": MODEL}, headers=AUTH).json()
    summaries = ["acme/my_app/pr-1", "acme/my-app/pr-1", "50% off", "50 cents off", "C:\\work\\app"]
    ids = {}
    for summary in summaries:
        ids[summary] = new_conversation(http, agent["id"])
        label(http, ids[summary], summary)

    def found(search: str) -> list[str]:
        params = {"agent_id": agent["id"], "summary_search": search}
        return [c["summary"] for c in http.get("/v1/conversations/", params=params, headers=AUTH).json()]

    assert found("my_app") == ["acme/my_app/pr-1"]
    assert found("50%") == ["50% off"]
    assert found("C:\\work") == ["C:\\work\\app"]
    assert find_by_summary(http, agent["id"], "acme/my_app/pr-1") == ids["acme/my_app/pr-1"]


def test_the_label_lands_while_letta_code_s_turn_runs(
    server: LiveServer, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """The runner labels the conversation when the `init` event arrives, with the turn under way."""
    agent = http.post("/v1/agents/", json={"name": "acme-bot", "model": MODEL}, headers=AUTH).json()
    conversation_id = new_conversation(http, agent["id"])
    mock_llm.script(Reply.delay(2, then=Reply.text("Looking at the issue.")))
    payload = {"messages": [{"role": "user", "content": "Please look at issue 7"}], "streaming": True}
    statuses: list[int] = []

    def turn() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30, headers=AUTH) as own:
            response = own.post(f"/v1/conversations/{conversation_id}/messages", json=payload)
            statuses.append(response.status_code)

    sender = threading.Thread(target=turn)
    sender.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:  # the model is thinking
        time.sleep(0.05)
    started = time.monotonic()
    label(http, conversation_id, "acme/app/issue-7")
    assert time.monotonic() - started < 1.5  # not held until the turn ends
    assert find_by_summary(http, agent["id"], "acme/app/issue-7") == conversation_id
    sender.join()
    assert statuses == [200]
    # The finished turn left the label alone.
    assert find_by_summary(http, agent["id"], "acme/app/issue-7") == conversation_id
    shown = http.get(f"/v1/conversations/{conversation_id}/messages", headers=AUTH).json()
    assert "Looking at the issue." in [m.get("content") for m in shown]
