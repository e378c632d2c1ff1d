"""Conversation routes where Letta 0.16.8's exact behaviour was checked against its source: a background retry
re-attaching while its first run goes on, the create body, list limits, the resume route's lookups and texts."""

import json
import uuid
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_background_streams import chunks
from tests.api.test_conversations_api import make_agent
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def first_chunk_then_drop(base_url: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST a streamed send, read its first event, and hang up."""
    with (
        httpx.Client(base_url=base_url, timeout=30) as own,
        own.stream("POST", path, json=payload) as response,
    ):
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                return dict(json.loads(line[len("data: ") :]))
    raise AssertionError("no chunk")


@pytest.mark.parametrize("thread", ["conversation", "default"])
def test_a_background_retry_while_the_first_run_goes_on_reattaches(
    server: LiveServer, client: Letta, http: httpx.Client, mock_llm: MockLLM, thread: str
) -> None:
    """Letta's `try_recover_duplicate_request` runs before the lock on lock-keyed routes: the retry gets 200 and
    the first run's stream, not a 409 naming that run."""
    agent = make_agent(client)
    conv_id = client.conversations.create(agent_id=agent.id).id if thread == "conversation" else "default"
    extra = {"agent_id": agent.id} if thread == "default" else {}
    mock_llm.script(Reply.delay(1.5, then=Reply.text("one turn")))
    message = {"role": "user", "content": "hi", "otid": str(uuid.uuid4())}
    payload = {"messages": [message], "streaming": True, "background": True, "stream_tokens": False, **extra}
    path = f"/v1/conversations/{conv_id}/messages"
    first = first_chunk_then_drop(server.base_url, path, payload)
    retry = http.post(path, json=payload)
    assert retry.status_code == 200, retry.text
    events = chunks(retry.text)
    assert events[0]["run_id"] == first["run_id"] and events[0]["seq_id"] == first["seq_id"]
    assert any(isinstance(e, dict) and e.get("content") == "one turn" for e in events) and events[-1] == "[DONE]"
    assert len(mock_llm.requests) == 1


def test_conversation_model_settings_without_a_model_change_nothing(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """Letta applies a conversation's `model_settings` only with its `model` (`if conversation.model:`): alone, the
    agent's own llm_config runs the turn (send and preview), its temperature and output limit kept."""
    agent = make_agent(client)
    client.agents.update(
        agent.id,
        model_settings={"provider_type": "openai", "temperature": 0.9, "max_output_tokens": 1234},  # type: ignore[arg-type]
    )
    own_settings = {"model_settings": {"provider_type": "openai", "temperature": 0.1}}
    conv = http.post("/v1/conversations/", params={"agent_id": agent.id}, json=own_settings).json()
    mock_llm.script(Reply.text("agent settings"))
    hi = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}
    sent = http.post(f"/v1/conversations/{conv['id']}/messages", json=hi)
    assert sent.status_code == 200, sent.text
    request = mock_llm.requests[-1]
    assert (request["model"], request["temperature"], request["max_completion_tokens"]) == ("gpt-4o-mini", 0.9, 1234)
    preview = http.post(f"/v1/conversations/{conv['id']}/messages/preview-raw-payload", json=hi).json()
    assert (preview["temperature"], preview["max_completion_tokens"]) == (0.9, 1234)


def test_conversation_model_settings_on_an_agent_without_a_handle(http: httpx.Client, mock_llm: MockLLM) -> None:
    """An agent made from a raw llm_config has no handle to resolve the settings against: still a 200."""
    raw = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "model_endpoint": mock_llm.base_url}
    bare = http.post("/v1/agents/", json={"name": "no-handle", "llm_config": {**raw, "context_window": 8000}}).json()
    assert bare["llm_config"].get("handle") is None
    own_settings = {"model_settings": {"provider_type": "openai", "temperature": 0.1}}
    conv = http.post("/v1/conversations/", params={"agent_id": bare["id"]}, json=own_settings).json()
    mock_llm.script(Reply.text("no handle needed"))
    hi = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}
    sent = http.post(f"/v1/conversations/{conv['id']}/messages", json=hi)
    assert sent.status_code == 200, sent.text
    assert http.post(f"/v1/conversations/{conv['id']}/messages/preview-raw-payload", json=hi).status_code == 200


def test_create_without_a_body(client: Letta, http: httpx.Client) -> None:
    """Letta's create body has a default (`Body(default_factory=CreateConversation)`): none at all is a 200."""
    agent = make_agent(client)
    created = http.post("/v1/conversations/", params={"agent_id": agent.id})
    assert created.status_code == 200, created.text
    assert created.json()["agent_id"] == agent.id and created.json()["isolated_block_ids"] == []


NO_ACTIVE = {"detail": "INVALID_ARGUMENT: No active runs found for this conversation."}
UNKNOWN_CONV = "conv-00000000-0000-4000-8000-000000000000"
UNKNOWN_AGENT = "agent-00000000-0000-4000-8000-000000000000"


def test_resume_by_run_id_or_otid_does_not_resolve_the_path(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """Letta's conversation stream reads a run id or otid as given; without either it lists the path's active runs,
    so an unknown conversation or agent is its 400 "No active runs", not a 404."""
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("resumable"))
    otid = str(uuid.uuid4())
    message = {"role": "user", "content": "hi", "otid": otid}
    sent = http.post(f"/v1/conversations/{conv.id}/messages", json={"messages": [message], "background": True})
    run_id = chunks(sent.text)[0]["run_id"]
    for path in (UNKNOWN_CONV, "default", UNKNOWN_AGENT):
        for lookup in ({"run_id": run_id}, {"otid": otid}):
            resumed = http.post(f"/v1/conversations/{path}/stream", json=lookup)
            assert resumed.status_code == 200, (path, lookup, resumed.text)
            assert chunks(resumed.text)[0]["run_id"] == run_id and "resumable" in resumed.text
    for path, body in (
        (UNKNOWN_CONV, {}),
        ("default", {}),
        (UNKNOWN_AGENT, {}),
        ("default", {"agent_id": UNKNOWN_AGENT}),
    ):
        missing = http.post(f"/v1/conversations/{path}/stream", json=body)
        assert (missing.status_code, missing.json()) == (400, NO_ACTIVE), (path, body)
    assert http.post(f"/v1/conversations/{conv.id}/stream", json={}).json() == NO_ACTIVE  # known, nothing active


def test_list_with_limit_zero_is_empty(client: Letta, http: httpx.Client) -> None:
    """Letta's list applies `limit` as given (`stmt.limit(limit)`): 0 lists nothing."""
    agent = make_agent(client)
    client.conversations.create(agent_id=agent.id)
    assert len(http.get("/v1/conversations/", params={"agent_id": agent.id}).json()) == 1
    listed = http.get("/v1/conversations/", params={"agent_id": agent.id, "limit": 0})
    assert (listed.status_code, listed.json()) == (200, [])


def test_resume_by_an_unknown_otid_has_lettas_text(http: httpx.Client) -> None:
    missing = http.post(f"/v1/conversations/{UNKNOWN_CONV}/stream", json={"otid": "otid-nobody-sent"})
    detail = "No run found for otid=otid-nobody-sent. The run may have expired or never existed."
    assert (missing.status_code, missing.json()) == (404, {"detail": detail})


NOT_BACKGROUND = {"detail": "INVALID_ARGUMENT: Run was not created in background mode, so it cannot be retrieved."}


def test_resume_of_a_run_not_in_background_is_a_400_on_every_lookup(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """Letta's conversation stream refused a non-background run only when it found it as the thread's active run;
    by run_id or otid it followed a stream that was never recorded, pings until the client gave up. memlet answers
    Letta's 400 for every lookup, as `POST /v1/runs/{id}/stream` does (README, compatibility notes)."""
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("not resumable"))
    otid = str(uuid.uuid4())
    message = {"role": "user", "content": "hi", "otid": otid}
    sent = http.post(f"/v1/conversations/{conv.id}/messages", json={"messages": [message], "background": False})
    run_id = chunks(sent.text)[0]["run_id"]
    for lookup in ({"run_id": run_id}, {"otid": otid}):
        resumed = http.post(f"/v1/conversations/{conv.id}/stream", json=lookup)
        assert (resumed.status_code, resumed.json()) == (400, NOT_BACKGROUND), lookup
    resumed = http.post(f"/v1/runs/{run_id}/stream", json={})
    assert (resumed.status_code, resumed.json()) == (400, NOT_BACKGROUND)
