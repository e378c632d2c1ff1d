"""Provider failures through the HTTP API: a timeout ends the run with Letta's error shape and the agent stays usable;
and the classic memgpt_agent type ends its turn with send_message after editing core memory."""

import json
import time

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply


def say(http: httpx.Client, agent_id: str, text: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})


def test_llm_timeout_is_504_and_the_agent_stays_usable(settings: Settings, mock_llm: MockLLM, pg_uri: str) -> None:
    impatient = LiveServer(settings.model_copy(update={"llm_timeout_s": 0.5, "llm_max_retries": 1})).start()
    try:
        with httpx.Client(base_url=impatient.base_url, timeout=30) as http:
            mock_llm.reset()
            agent = http.post("/v1/agents/", json={"name": "slow", "model": "openai/gpt-4o-mini"}).json()
            mock_llm.script(Reply.delay(2, Reply.text("too late")), Reply.delay(2, Reply.text("too late")))
            failed = say(http, agent["id"], "hello?")
            assert failed.status_code == 504
            assert failed.json()["error"]["type"] == "llm_timeout"
            assert len(mock_llm.requests) == 2  # the first attempt and its one retry (llm_max_retries=1)
            runs = http.get("/v1/runs/", params={"agent_id": agent["id"]}).json()
            assert [(r["status"], r["stop_reason"]) for r in runs] == [("failed", "llm_api_error")]

            mock_llm.script(Reply.text("back again"))
            ok = say(http, agent["id"], "hello again")
            assert ok.status_code == 200
            assert len(mock_llm.requests) == 3
            history = http.get(f"/v1/agents/{agent['id']}/messages").json()
            texts = [m.get("content") for m in history if m["message_type"] in ("user_message", "assistant_message")]
            assert texts == ["hello again", "back again"]  # the failed turn left no trace but its run
    finally:
        impatient.stop()
        reset_database(pg_uri)


def test_server_errors_are_retried_exactly_llm_max_retries_times(
    settings: Settings, client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    mock_llm.reset()
    agent = client.agents.create(model="openai/gpt-4o-mini")
    mock_llm.script(Reply.error(500, times=settings.llm_max_retries), Reply.text("third time lucky"))
    answered = say(http, agent.id, "hello?")
    assert answered.status_code == 200
    assert answered.json()["messages"][-1]["content"] == "third time lucky"
    assert len(mock_llm.requests) == settings.llm_max_retries + 1

    mock_llm.reset()
    mock_llm.script(Reply.error(500, times=settings.llm_max_retries + 5))
    failed = say(http, agent.id, "hello again?")
    assert failed.status_code == 500
    assert failed.json()["error"]["type"] == "llm_error"
    assert len(mock_llm.requests) == settings.llm_max_retries + 1


def test_a_rejected_key_is_not_retried(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(model="openai/gpt-4o-mini")
    mock_llm.script(Reply.error(401, message="Incorrect API key provided", times=5))
    failed = say(http, agent.id, "hello?")
    assert failed.status_code == 401
    assert failed.json()["error"]["type"] == "llm_authentication"
    assert len(mock_llm.requests) == 1


def test_memgpt_agent_edits_core_memory_then_replies(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(
        model="openai/gpt-4o-mini", agent_type="memgpt_agent", memory_blocks=[{"label": "human", "value": "Name: Bob"}]
    )
    names = {t.name for t in client.agents.retrieve(agent.id, include=["agent.tools"]).tools}
    assert {"send_message", "conversation_search", "core_memory_append", "core_memory_replace"} <= names
    mock_llm.script(
        Reply.tool_call(
            "core_memory_append",
            {"label": "human", "content": "Likes tea.", "thinking": "note it", "request_heartbeat": True},
        ),
        Reply.tool_call("send_message", {"message": "Noted, Bob!", "thinking": "reply now"}),
    )
    body = say(http, agent.id, "I like tea").json()
    assert body["stop_reason"]["stop_reason"] == "end_turn"
    assert body["messages"][-1] == {
        **body["messages"][-1],
        "message_type": "assistant_message",
        "content": "Noted, Bob!",
    }
    assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Bob\nLikes tea."
    # every tool schema the model saw carries the inner-thoughts parameter first
    tools = mock_llm.requests[0]["tools"]
    assert all(next(iter(t["function"]["parameters"]["properties"])) == "thinking" for t in tools)


def test_retries_wait_the_configured_base_delay(settings: Settings, mock_llm: MockLLM, pg_uri: str) -> None:
    # MEMLET_LLM_RETRY_BASE_DELAY_S reaches the client: 1 s here, twice the built-in default of 0.5 s.
    patient = LiveServer(settings.model_copy(update={"llm_retry_base_delay_s": 1.0, "llm_max_retries": 1})).start()
    try:
        with httpx.Client(base_url=patient.base_url, timeout=30) as http:
            mock_llm.reset()
            agent = http.post("/v1/agents/", json={"name": "retry", "model": "openai/gpt-4o-mini"}).json()
            mock_llm.script(Reply.error(500, times=1), Reply.text("second time lucky"))
            started = time.monotonic()
            answered = say(http, agent["id"], "hello?")
            waited = time.monotonic() - started
            assert answered.status_code == 200
            assert len(mock_llm.requests) == 2
            assert waited >= 1.0
    finally:
        patient.stop()
        reset_database(pg_uri)


@pytest.mark.parametrize("endpoint_type", ["openai", "anthropic"])
def test_an_endpoint_url_that_cannot_be_sent_fails_the_turn_not_the_server(
    http: httpx.Client, mock_llm: MockLLM, endpoint_type: str
) -> None:
    """A control character in a stored model_endpoint (it resolves nowhere, so it passes the outbound check) made
    every send a 500 and every stream a reset connection."""
    mock_llm.reset()
    bad = {"model": "m", "model_endpoint_type": endpoint_type, "model_endpoint": "http://api.open\x17ai.com/v1"}
    agent = http.post("/v1/agents/", json={"name": "bad-url", "llm_config": {**bad, "context_window": 8000}}).json()
    failed = say(http, agent["id"], "hello?")
    assert failed.status_code == 400, failed.text
    assert failed.json()["error"] == {
        "type": "llm_bad_request",
        "message": "The request to the LLM model provider was invalid.",
        "detail": "INVALID_ARGUMENT: The LLM endpoint URL cannot be used: the URL holds a control character",
    }
    body = {"messages": [{"role": "user", "content": "and now?"}], "stream_tokens": True}
    with http.stream("POST", f"/v1/agents/{agent['id']}/messages/stream", json=body) as streamed:
        events = [line for line in streamed.iter_lines() if line.startswith("data: ")]
    assert streamed.status_code == 200 and events[-1] == "data: [DONE]"
    kinds = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert {"message_type": "stop_reason", "stop_reason": "error"} in kinds
    [error] = [k for k in kinds if k["message_type"] == "error_message"]
    assert (error["error_type"], error["message"]) == ("llm_error", "An error occurred with the LLM request.")
    assert mock_llm.requests == []

    fixed = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "model_endpoint": mock_llm.base_url}
    assert http.patch(f"/v1/agents/{agent['id']}", json={"llm_config": {**fixed, "context_window": 8000}}).is_success
    mock_llm.script(Reply.text("all good"))
    answered = say(http, agent["id"], "hello again")
    assert answered.status_code == 200 and answered.json()["messages"][-1]["content"] == "all good"


def test_an_embedding_endpoint_that_cannot_be_sent_is_a_400(http: httpx.Client) -> None:
    embedding = {
        "embedding_model": "text-embedding-3-small",
        "embedding_endpoint_type": "openai",
        "embedding_endpoint": "http://api.open\x17ai.com/v1",
        "embedding_dim": 1536,
    }
    agent = http.post(
        "/v1/agents/", json={"name": "bad-embedding", "model": "openai/gpt-4o-mini", "embedding_config": embedding}
    ).json()
    inserted = http.post(f"/v1/agents/{agent['id']}/archival-memory", json={"text": "hello"})
    assert inserted.status_code == 400, inserted.text
    assert inserted.json()["error"]["type"] == "llm_bad_request"
