"""Log probabilities for RL-training clients (`return_logprobs`, `top_logprobs`), as Letta 0.16.8 serves them.

Letta's blocking agent send copies the request's three fields onto the turn's llm_config when `return_logprobs` or
`return_token_ids` is set; an agent whose own llm_config has `return_logprobs` asks for them on every route. An
OpenAI-compatible request then carries `logprobs: true` (and `top_logprobs` when set), and a letta_v1 agent's
blocking `LettaResponse.logprobs` holds those of the turn's last LLM call. Streams never show them. Checked in what
the model was sent and what it answered (the mock's records, `tests.mock_llm.logprobs`) through letta-client.
"""

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, agent_type: str = "letta_v1_agent", **config: Any) -> Any:
    blocks = [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}]
    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=blocks,  # type: ignore[arg-type]
        agent_type=agent_type,  # type: ignore[arg-type]
    )
    if config:
        llm_config = {**agent.llm_config.model_dump(exclude_none=True), **config}
        agent = client.agents.update(agent.id, llm_config=llm_config)  # type: ignore[arg-type]
    return agent


def asked(request: dict[str, Any]) -> dict[str, Any]:
    """The logprobs fields of a request the model was sent."""
    return {k: request[k] for k in ("logprobs", "top_logprobs") if k in request}


def test_a_blocking_send_asks_for_logprobs_only_when_told(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("plain answer"), Reply.text("three alternatives each"))
    plain = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {}
    assert plain.logprobs is None and plain.turns is None
    told = client.agents.messages.create(agent.id, messages=HI, return_logprobs=True, top_logprobs=3)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {"logprobs": True, "top_logprobs": 3}
    assert told.messages[-1].content == "three alternatives each"  # type: ignore[union-attr]
    shown = told.model_dump()["logprobs"]
    assert shown == mock_llm.sent_logprobs[-1]
    assert [t["token"] for t in shown["content"]] == ["three", " alternatives", " each"]
    assert all(len(t["top_logprobs"]) == 3 for t in shown["content"])
    assert told.turns is None
    # The request's fields were for that turn only: the agent asks for nothing again.
    client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {}


def test_logprobs_without_top_and_top_without_logprobs(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.text("no alternatives"), Reply.text("not asked"))
    bare = client.agents.messages.create(agent.id, messages=HI, return_logprobs=True)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {"logprobs": True}
    assert bare.model_dump()["logprobs"] == mock_llm.sent_logprobs[-1]
    assert all(t["top_logprobs"] == [] for t in bare.model_dump()["logprobs"]["content"])
    # As in Letta, top_logprobs alone changes nothing.
    alone = client.agents.messages.create(agent.id, messages=HI, top_logprobs=5)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {}
    assert alone.logprobs is None


def test_the_response_holds_the_last_llm_calls_logprobs(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "Bob"}), Reply.text("found him"))
    done = client.agents.messages.create(agent.id, messages=HI, return_logprobs=True, top_logprobs=1)  # type: ignore[arg-type]
    assert [asked(r) for r in mock_llm.requests] == [{"logprobs": True, "top_logprobs": 1}] * 2
    first, last = mock_llm.sent_logprobs
    assert first["content"] and first != last
    assert done.model_dump()["logprobs"] == last


@pytest.mark.parametrize("top", [21, -1])
def test_a_top_logprobs_the_provider_refuses_is_its_400(client: Letta, http: httpx.Client, top: int) -> None:
    """Letta checks no range: the value goes to the provider as given, whose refusal is the send's 400."""
    agent = make_agent(client)
    body = {"messages": HI, "return_logprobs": True, "top_logprobs": top}
    refused = http.post(f"/v1/agents/{agent.id}/messages", json=body)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["type"], error["message"]) == (
        "llm_bad_request",
        "The request to the LLM model provider was invalid.",
    )
    assert "top_logprobs" in error["detail"]
    not_a_number = http.post(f"/v1/agents/{agent.id}/messages", json={**body, "top_logprobs": "many"})
    assert not_a_number.status_code == 422, not_a_number.text


def stream_events(http: httpx.Client, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    # As letta-client sends it (a streamed send to /messages is for 1.x SDKs only).
    with http.stream("POST", path, json=body, headers={"x-stainless-package-version": "1.0.0"}) as response:
        assert response.status_code == 200, response.read()
        lines = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: {")]
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("path", ["/v1/agents/{id}/messages", "/v1/agents/{id}/messages/stream"])
def test_streamed_and_async_sends_leave_the_request_fields(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, path: str
) -> None:
    """Letta copies the fields onto the config in its blocking agent route only."""
    agent = make_agent(client)
    body = {"messages": HI, "return_logprobs": True, "top_logprobs": 2, "streaming": True, "stream_tokens": True}
    events = stream_events(http, path.format(id=agent.id), body)
    assert asked(mock_llm.requests[-1]) == {}
    assert events[-1]["message_type"] == "usage_statistics"
    run = client.agents.messages.create_async(agent.id, messages=HI, return_logprobs=True)  # type: ignore[arg-type]
    for _ in range(200):
        if client.runs.retrieve(run.id).status not in ("created", "running"):
            break
        time.sleep(0.05)
    assert len(mock_llm.requests) == 2
    assert asked(mock_llm.requests[-1]) == {}


@pytest.mark.parametrize("stream_tokens", [True, False])
def test_an_agent_configured_for_logprobs_asks_on_every_route_and_streams_none(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, stream_tokens: bool
) -> None:
    agent = make_agent(client, return_logprobs=True, top_logprobs=2)
    assert agent.llm_config.return_logprobs is True
    body = {"messages": HI, "streaming": True, "stream_tokens": stream_tokens}
    events = stream_events(http, f"/v1/agents/{agent.id}/messages", body)
    assert asked(mock_llm.requests[-1]) == {"logprobs": True, "top_logprobs": 2}
    assert mock_llm.sent_logprobs  # the model answered with them ...
    assert all("logprobs" not in json.dumps(event) for event in events)  # ... which no chunk shows
    conversation = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.text("in a conversation"))
    # (letta-client reads a conversation's send as a stream: sent as JSON here.)
    sent = http.post(f"/v1/conversations/{conversation.id}/messages", json={"messages": HI, "streaming": False})
    assert sent.status_code == 200, sent.text
    assert asked(mock_llm.requests[-1]) == {"logprobs": True, "top_logprobs": 2}
    assert sent.json()["logprobs"] == mock_llm.sent_logprobs[-1]
    preview = http.post(f"/v1/agents/{agent.id}/messages/preview-raw-payload", json={"messages": HI})
    assert asked(preview.json()) == {"logprobs": True, "top_logprobs": 2}


def test_a_conversation_send_leaves_the_request_fields(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id)
    body = {"messages": HI, "streaming": False, "return_logprobs": True, "top_logprobs": 2}
    sent = http.post(f"/v1/conversations/{conversation.id}/messages", json=body)
    assert sent.status_code == 200, sent.text
    assert asked(mock_llm.requests[-1]) == {}
    assert sent.json()["logprobs"] is None


def test_a_memgpt_agent_asks_but_answers_none(client: Letta, mock_llm: MockLLM) -> None:
    """Letta's V2 loop sends the config's fields and keeps no logprobs."""
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("send_message", {"message": "hello"}))
    sent = client.agents.messages.create(agent.id, messages=HI, return_logprobs=True)  # type: ignore[arg-type]
    assert asked(mock_llm.requests[-1]) == {"logprobs": True}
    assert mock_llm.sent_logprobs and sent.logprobs is None


@pytest.mark.parametrize(
    ("model", "endpoint_type", "agent_type", "sends"),
    [
        ("llama-3.3-70b", "groq", "letta_v1_agent", False),
        ("deepseek-reasoner", "deepseek", "letta_v1_agent", False),
        ("deepseek-chat", "deepseek", "letta_v1_agent", True),
        ("gpt-5", "openai", "letta_v1_agent", False),  # Letta's Responses API request
        ("gpt-5", "openai", "memgpt_v2_agent", True),
        ("qwen3", "vllm", "letta_v1_agent", True),
    ],
)
def test_which_providers_are_asked(
    http: httpx.Client, mock_llm: MockLLM, model: str, endpoint_type: str, agent_type: str, sends: bool
) -> None:
    llm_config = {
        "model": model,
        "model_endpoint_type": endpoint_type,
        "model_endpoint": mock_llm.base_url,
        "context_window": 32000,
        "return_logprobs": True,
        "top_logprobs": 4,
    }
    created = http.post("/v1/agents/", json={"name": "lp", "agent_type": agent_type, "llm_config": llm_config})
    assert created.status_code == 200, created.text
    preview = http.post(f"/v1/agents/{created.json()['id']}/messages/preview-raw-payload", json={"messages": HI})
    assert preview.status_code == 200, preview.text
    assert asked(preview.json()) == ({"logprobs": True, "top_logprobs": 4} if sends else {})


def chunk(delta: dict[str, Any], logprobs: Any, finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}
    return f"data: {json.dumps({'id': 'c-1', 'object': 'chat.completion.chunk', 'choices': [choice]})}\n\n"


def test_a_providers_loose_logprobs_are_shown_in_openais_shape(client: Letta, mock_llm: MockLLM) -> None:
    """A server that leaves out `bytes`, sends `top_logprobs: null` or a token without its number: the response
    shows OpenAI's shape (missing bytes null, no alternatives an empty list) without the unusable token."""
    agent = make_agent(client)
    mock_llm.script(
        Reply.raw(
            chunk({"role": "assistant", "content": ""}, None),
            chunk({"content": "Hel"}, {"content": [{"token": "Hel", "logprob": -0.5, "top_logprobs": None}]}),
            chunk({"content": "lo"}, {"content": [{"token": "lo", "logprob": "high"}, {"logprob": -1}]}),
            chunk(
                {"content": "!"},
                {
                    "content": [
                        {"token": "!", "logprob": 0, "bytes": [33], "top_logprobs": [{"token": "?", "logprob": -3}]}
                    ]
                },
            ),
            chunk({}, None, "stop"),
            "data: [DONE]\n\n",
        )
    )
    sent = client.agents.messages.create(agent.id, messages=HI, return_logprobs=True)  # type: ignore[arg-type]
    assert sent.messages[-1].content == "Hello!"  # type: ignore[union-attr]
    assert sent.model_dump()["logprobs"] == {
        "content": [
            {"token": "Hel", "bytes": None, "logprob": -0.5, "top_logprobs": []},
            {
                "token": "!",
                "bytes": [33],
                "logprob": 0.0,
                "top_logprobs": [{"token": "?", "bytes": None, "logprob": -3.0}],
            },
        ],
        "refusal": None,
    }


@pytest.fixture(scope="module")
def sglang_server(settings: Settings, mock_llm: MockLLM) -> Iterator[LiveServer]:
    live = LiveServer(settings.model_copy(update={"sglang_api_base": mock_llm.root_url})).start()
    yield live
    live.stop()


def test_an_sglang_model_comes_with_logprobs_on(sglang_server: LiveServer, pg_uri: str, mock_llm: MockLLM) -> None:
    """Letta resolves an SGLang provider's handle with `return_logprobs` and `return_token_ids` on; the model list
    shows them off. memlet asks such a model for logprobs on every call but returns no `turns` (README)."""
    client = Letta(base_url=sglang_server.base_url, max_retries=0, timeout=60)
    try:
        listed = [m for m in client.models.list() if m.handle == "sglang/gpt-4o-mini"]
        assert [(m.return_logprobs, m.return_token_ids) for m in listed] == [(False, False)]
        agent = client.agents.create(model="sglang/gpt-4o-mini", embedding=EMBEDDING, agent_type="letta_v1_agent")
        assert (agent.llm_config.return_logprobs, agent.llm_config.return_token_ids) == (True, True)
        mock_llm.script(Reply.text("trained"))
        sent = client.agents.messages.create(agent.id, messages=HI)  # type: ignore[arg-type]
        assert asked(mock_llm.requests[-1]) == {"logprobs": True}
        assert sent.model_dump()["logprobs"] == mock_llm.sent_logprobs[-1]
        assert sent.turns is None
    finally:
        reset_database(pg_uri)
