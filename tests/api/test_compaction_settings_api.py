"""`compaction_settings` honoured: each field changes what the summarizer is sent or what stays in the context,
on `POST /v1/agents/{id}/summarize`, on `POST /v1/conversations/{id}/compact` and in the loop; cuts fall only at
turn boundaries."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def agent_with_turns(client: Letta, mock_llm: MockLLM, turns: int = 10, **kwargs: Any) -> str:
    agent = client.agents.create(model=MODEL, **kwargs)
    for i in range(turns):
        mock_llm.script(Reply.text(f"reply {i}"))
        client.agents.messages.create(agent.id, input=f"message {i}")
    mock_llm.reset()
    return agent.id


def summarize(http: httpx.Client, agent_id: str, **settings: Any) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/summarize", json={"compaction_settings": settings} if settings else {})


def test_prompt_and_model_reach_the_summarizer(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_turns(client, mock_llm)
    mock_llm.script(Reply.text("summary"))
    response = summarize(http, agent_id, prompt="Summarize like a pirate.", model="openai/gpt-4o")
    assert response.status_code == 200, response.text
    (request,) = mock_llm.requests
    assert request["messages"][0] == {"role": "system", "content": "Summarize like a pirate."}
    assert request["model"] == "gpt-4o"  # the agent itself runs gpt-4o-mini
    # The agent's stored settings apply when the request names none.
    client.agents.update(agent_id, compaction_settings={"prompt": "Stored instructions.", "model": MODEL})
    mock_llm.script(Reply.text("summary"))
    assert summarize(http, agent_id).status_code == 200
    assert mock_llm.requests[-1]["messages"][0]["content"] == "Stored instructions."
    assert mock_llm.requests[-1]["model"] == "gpt-4o-mini"


def test_clip_chars_cuts_the_summary(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_turns(client, mock_llm)
    mock_llm.script(Reply.text("abcdefghij" * 10))
    response = summarize(http, agent_id, clip_chars=25)
    assert response.json()["summary"] == "abcdefghij" * 2 + "abcde" + "... [summary truncated to fit]"
    ids = client.agents.retrieve(agent_id).message_ids or []
    stored = client.messages.retrieve(ids[1])[0]
    assert "abcdefghijabcdefghijabcde..." in str(stored)


def test_modes_and_percentage_decide_what_stays(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    after: dict[str, int] = {}
    for name, settings in {
        "sliding 0.3": {"mode": "sliding_window", "sliding_window_percentage": 0.3},
        "sliding 0.6": {"mode": "sliding_window", "sliding_window_percentage": 0.6},
        "all": {"mode": "all"},
    }.items():
        agent_id = agent_with_turns(client, mock_llm)
        mock_llm.script(Reply.text(f"summary for {name}"))
        response = summarize(http, agent_id, **settings)
        assert response.status_code == 200, response.text
        after[name] = response.json()["num_messages_after"]
        evicted = mock_llm.requests[-1]["messages"][1]["content"]
        assert ("message 9" in evicted) == (name == "all")  # only `all` summarizes the newest turn
    assert after["all"] == 2  # the system message and the summary
    assert 2 < after["sliding 0.6"] < after["sliding 0.3"]


def test_cuts_fall_at_turn_boundaries(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL)
    for i in range(6):  # turns of three steps each: a tool call, its return, then the answer
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": f"q{i}"}),
            Reply.text(f"reply {i}"),
        )
        client.agents.messages.create(agent.id, input=f"message {i}")
    mock_llm.reset()
    for percentage in (0.3, 0.45, 0.6):
        mock_llm.script(Reply.text("summary"))
        response = summarize(http, agent.id, sliding_window_percentage=percentage)
        assert response.status_code == 200, response.text
        ids = client.agents.retrieve(agent.id).message_ids or []
        first_kept = client.messages.retrieve(ids[2])[0]
        assert getattr(first_kept, "message_type", None) == "user_message", first_kept
        assert "message" in str(first_kept.content)  # a turn's own input, never a tool return or a reply


def test_conversation_compact_honours_settings(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL)
    conversation = client.conversations.create(agent_id=agent.id)
    for i in range(6):
        mock_llm.script(Reply.text(f"reply {i}"))
        http.post(f"/v1/conversations/{conversation.id}/messages", json={"input": f"message {i}", "streaming": False})
    mock_llm.reset()
    mock_llm.script(Reply.text("thread summary"))
    body = {"compaction_settings": {"mode": "all", "prompt": "Thread instructions."}}
    response = http.post(f"/v1/conversations/{conversation.id}/compact", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["num_messages_after"] == 2
    assert mock_llm.requests[-1]["messages"][0]["content"] == "Thread instructions."


def test_model_settings_and_acknowledgement_reach_the_summarizer(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """As Letta's summarizer config takes `model_settings` (its output limit and temperature) and
    `prompt_acknowledgement` puts the summarizer's acknowledgement between its instructions and the transcript."""
    agent_id = agent_with_turns(client, mock_llm, turns=4)
    mock_llm.script(Reply.text("summary"))
    model_settings = {"provider_type": "openai", "max_output_tokens": 4321, "temperature": 0.05}
    response = summarize(http, agent_id, mode="all", model_settings=model_settings, prompt_acknowledgement=True)
    assert response.status_code == 200, response.text
    (request,) = mock_llm.requests
    assert (request["max_completion_tokens"], request["temperature"]) == (4321, 0.05)
    assert [m["role"] for m in request["messages"]] == ["system", "assistant", "user"]
    assert "message 3" in request["messages"][2]["content"]
    # Stored on the agent, they apply to its later compactions too.
    client.agents.update(agent_id, compaction_settings={"model_settings": model_settings})  # type: ignore[typeddict-item]
    mock_llm.reset()
    for i in range(3):
        mock_llm.script(Reply.text(f"more {i}"))
        client.agents.messages.create(agent_id, input=f"more {i}")
    mock_llm.script(Reply.text("summary"))
    assert summarize(http, agent_id).status_code == 200
    assert (mock_llm.requests[-1]["max_completion_tokens"], mock_llm.requests[-1]["temperature"]) == (4321, 0.05)
    assert [m["role"] for m in mock_llm.requests[-1]["messages"]] == ["system", "user"]
