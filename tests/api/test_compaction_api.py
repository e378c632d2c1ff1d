"""Compaction as Letta 0.16.8 does it, through the live server and the mock LLM (which reports real cl100k_base
token counts): the trigger after a step at 90% of the window, compact-and-retry on a provider overflow (three
times at most), V2 compacting only after the turn, and the 400 for a system prompt larger than the window."""

import json
import math
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
WINDOW = 4000


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def agent_with_history(client: Letta, mock_llm: MockLLM, turns: int = 3, **kwargs: Any) -> str:
    agent = client.agents.create(model=MODEL, context_window_limit=WINDOW, **kwargs)
    for i in range(turns):
        if kwargs.get("agent_type") == "memgpt_v2_agent":
            mock_llm.script(Reply.tool_call("send_message", {"message": f"reply {i}"}))
        else:
            mock_llm.script(Reply.text(f"reply {i}"))
        client.agents.messages.create(agent.id, input=f"message {i}")
    mock_llm.reset()
    return agent.id


def send(http: httpx.Client, agent_id: str, text: str, **body: Any) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"input": text, **body})


def summaries(mock_llm: MockLLM) -> list[dict[str, Any]]:
    return [r for r in mock_llm.requests if not r.get("tools")]


def kinds(mock_llm: MockLLM) -> list[str]:
    return ["summary" if not r.get("tools") else "step" for r in mock_llm.requests]


@pytest.mark.parametrize("reported", [3601, 3599])
def test_v3_compacts_after_a_step_past_nine_tenths(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, reported: int
) -> None:
    agent_id = agent_with_history(client, mock_llm)
    # The prompt itself is small; only the provider's count (total_tokens = prompt + 1) passes 0.9 x 4,000.
    mock_llm.script(Reply.text("x").reporting(reported - 1), Reply.text("Earlier: three greetings."))
    response = send(http, agent_id, "hello", include_compaction_messages=True)
    assert response.status_code == 200, response.text
    messages = response.json()["messages"]
    if reported <= 3600:
        assert kinds(mock_llm) == ["step"]
        assert [m["message_type"] for m in messages] == ["assistant_message"]
        return
    assert kinds(mock_llm) == ["step", "summary"]  # after the step, not before it
    # A blocking response shows the summary as Letta does, include_compaction_messages or not: a user_message
    # holding the stored system alert with its stats.
    assert [m["message_type"] for m in messages] == ["assistant_message", "user_message"]
    stats = json.loads(messages[1]["content"])["compaction_stats"]
    assert stats["trigger"] == "post_step_context_check"
    assert stats["context_tokens_before"] == reported
    # The turn's usage reports the compacted window's size, as Letta's does (Letta Code's context meter reads it).
    assert response.json()["usage"]["context_tokens"] == stats["context_tokens_after"] < reported
    mock_llm.script(Reply.text("next"))
    send(http, agent_id, "again")
    sent = mock_llm.requests[-1]["messages"]
    assert "Earlier: three greetings." in json.dumps(sent[1])  # the summary opens the window
    assert "message 0" not in json.dumps(sent)


def test_v2_compacts_after_the_turn_not_after_each_step(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_history(client, mock_llm, agent_type="memgpt_v2_agent")
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "reply", "request_heartbeat": True}).reporting(3700),
        Reply.tool_call("send_message", {"message": "found it"}).reporting(3700),
        Reply.text("Summary of the search."),
    )
    response = send(http, agent_id, "search please")
    assert response.status_code == 200, response.text
    assert kinds(mock_llm) == ["step", "step", "summary"]
    # Letta's V2 loop compacts out of the turn's sight: the response never shows the summary.
    assert "user_message" not in [m["message_type"] for m in response.json()["messages"]]


@pytest.mark.parametrize("stream_tokens", [False, True])
def test_a_v2_stream_never_shows_the_summary(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, stream_tokens: bool
) -> None:
    agent_id = agent_with_history(client, mock_llm, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("send_message", {"message": "hi"}).reporting(3700), Reply.text("Summary."))
    body = {"input": "hello", "stream_tokens": stream_tokens, "include_compaction_messages": True}
    with http.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=body) as response:
        lines = [line[6:] for line in response.iter_lines() if line.startswith("data: {")]
    assert kinds(mock_llm) == ["step", "summary"]
    types = [json.loads(line)["message_type"] for line in lines]
    assert [t for t in dict.fromkeys(types) if t != "ping"] == ["assistant_message", "stop_reason", "usage_statistics"]
    listed = client.agents.messages.list(agent_id, limit=100).items
    assert any("Summary." in str(m.content) for m in listed if m.message_type == "user_message")  # stored as user


def test_overflow_compacts_and_retries_the_step(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_history(client, mock_llm)
    mock_llm.script(Reply.overflow(), Reply.text("Summary before retry."), Reply.text("after the retry"))
    response = send(http, agent_id, "hello", include_compaction_messages=True)
    assert response.status_code == 200, response.text
    assert kinds(mock_llm) == ["step", "summary", "step"]
    first, retry = mock_llm.requests[0]["messages"], mock_llm.requests[2]["messages"]
    assert len(retry) < len(first) and "Summary before retry." in json.dumps(retry[1])
    types = [m["message_type"] for m in response.json()["messages"]]
    assert types == ["user_message", "assistant_message"]
    alert = json.loads(response.json()["messages"][0]["content"])
    assert alert["compaction_stats"]["trigger"] == "context_window_exceeded"


def test_overflow_gives_up_after_three_retries(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_history(client, mock_llm)
    before = [m.id for m in client.agents.messages.list(agent_id, limit=100).items]
    script = [Reply.overflow(), Reply.text("s1"), Reply.overflow(), Reply.text("s2"), Reply.overflow()]
    mock_llm.script(*script, Reply.text("s3"), Reply.overflow(), Reply.text("never sent"))
    response = send(http, agent_id, "hello")
    assert response.status_code == 400, response.text
    assert kinds(mock_llm) == ["step", "summary"] * 3 + ["step"]  # the first try and three retries
    after = [m.id for m in client.agents.messages.list(agent_id, limit=100).items]
    assert set(before) <= set(after)  # nothing dropped from the history
    run = client.runs.list(agent_ids=[agent_id], limit=1).items[0]
    assert run.stop_reason == "error"


def test_failed_summary_keeps_the_context(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = agent_with_history(client, mock_llm)
    window = client.agents.retrieve(agent_id).message_ids
    mock_llm.script(Reply.text("x").reporting(3700), Reply.error(500, times=5))
    response = send(http, agent_id, "hello")
    assert response.status_code >= 400
    kept = client.agents.retrieve(agent_id).message_ids or []
    assert kept[: len(window or [])] == window  # no row left the context without a summary


def test_system_prompt_over_the_window_is_a_400(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(
        model=MODEL,
        context_window_limit=WINDOW,
        memory_blocks=[{"label": "human", "value": "lorem ipsum dolor " * 1500, "limit": 40_000}],
    )
    response = send(http, agent.id, "hello")
    assert response.status_code == 400, response.text
    assert "system prompt is too large" in response.json()["detail"]
    assert mock_llm.requests == []
    run = client.runs.list(agent_ids=[agent.id], limit=1).items[0]
    assert run.stop_reason == "context_window_overflow_in_system_prompt"
    with http.stream("POST", f"/v1/agents/{agent.id}/messages/stream", json={"input": "hello"}) as streamed:
        events = [json.loads(line[6:]) for line in streamed.iter_lines() if line.startswith("data: {")]
    assert {"message_type": "stop_reason", "stop_reason": "context_window_overflow_in_system_prompt"} in events
    error = next(e for e in events if e.get("error_type"))
    assert error["error_type"] == "context_window_overflow_in_system_prompt"


def test_the_loop_uses_the_agents_compaction_settings(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    settings = {"model": "openai/gpt-4o", "prompt": "Loop instructions.", "clip_chars": 12, "mode": "all"}
    agent_id = agent_with_history(client, mock_llm, compaction_settings=settings)
    mock_llm.script(Reply.text("x").reporting(3700), Reply.text("a summary far longer than twelve"))
    assert send(http, agent_id, "hello").status_code == 200
    step, summary = mock_llm.requests
    assert (step["model"], summary["model"]) == ("gpt-4o-mini", "gpt-4o")
    assert summary["messages"][0]["content"] == "Loop instructions."
    assert "message 0" in summary["messages"][1]["content"] and "hello" in summary["messages"][1]["content"]
    mock_llm.script(Reply.text("next"))
    send(http, agent_id, "again")
    sent = mock_llm.requests[-1]["messages"]
    assert len(sent) == 3  # mode all: the system message, the summary, the new input
    assert "a summary fa... [summary truncated to fit]" in sent[1]["content"]


def test_the_context_report_counts_a_summary_once(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta counts an in-context summary (a user message after the system message) as `summary_memory` and the
    messages after it as `messages`; memlet counted the summary in both."""
    agent_id = agent_with_history(client, mock_llm)
    long_summary = "Earlier: " + " ".join(f"topic{i}" for i in range(400))
    mock_llm.script(Reply.text("x").reporting(3700), Reply.text(long_summary))
    assert send(http, agent_id, "hello").status_code == 200
    assert kinds(mock_llm) == ["step", "summary"]
    report = http.get(f"/v1/agents/{agent_id}/context").json()
    assert "topic399" in report["summary_memory"] and report["num_tokens_summary_memory"] > 800
    assert report["num_tokens_messages"] < 200  # the few messages kept after it, not the summary again


def stored_summary(http: httpx.Client, agent_id: str) -> dict[str, Any]:
    """The agent's newest summary as listed, its packed alert read."""
    listed = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 100}).json()
    texts = [(m, m.get("summary") or m.get("content")) for m in reversed(listed)]
    (newest, text), *_ = [(m, t) for m, t in texts if isinstance(t, str) and "hidden from view" in t]
    return {**newest, "alert": json.loads(text)}


def test_the_summary_is_worded_as_letta_words_it(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta's alert names how many messages a sliding window hid (its stats' before minus after), or says
    "prior messages" when it has no stats (a manual compaction carries none) or summarized `all`."""
    agent_id = agent_with_history(client, mock_llm, turns=4)
    mock_llm.script(Reply.text("x").reporting(3700), Reply.text("Loop summary."))
    assert send(http, agent_id, "hello").status_code == 200
    alert = stored_summary(http, agent_id)["alert"]
    stats = alert["compaction_stats"]
    hidden = stats["messages_count_before"] - stats["messages_count_after"]
    assert alert["message"] == (
        f"Note: {hidden} messages from the beginning of the conversation have been hidden from view due to memory "
        "constraints.\nThe following is a summary of the previous messages:\n Loop summary."
    )

    for i in range(4):
        mock_llm.script(Reply.text(f"more {i}"))
        send(http, agent_id, f"more {i}")
    mock_llm.script(Reply.text("Manual summary."))
    assert http.post(f"/v1/agents/{agent_id}/summarize", json={}).status_code == 200
    manual = stored_summary(http, agent_id)
    assert "compaction_stats" not in manual["alert"]
    assert manual["alert"]["message"] == (
        "Note: prior messages from the beginning of the conversation have been hidden from view due to conversation "
        "memory constraints.\nThe following is a summary of the previous messages:\n Manual summary."
    )

    mock_llm.script(Reply.text("All of it."))
    everything = http.post(f"/v1/agents/{agent_id}/summarize", json={"compaction_settings": {"mode": "all"}})
    assert everything.status_code == 200, everything.text
    assert stored_summary(http, agent_id)["alert"]["message"] == (
        "Note: prior messages have been hidden from view due to conversation memory constraints.\n"
        "The following is a summary of the previous messages:\n All of it."
    )


def letta_estimate_after(system: dict[str, Any], kept: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Letta 0.16.8's count after a compaction for a non-Claude, non-Gemini model: UTF-8 bytes / 4 (rounded up)
    of the JSON of the system prompt and kept messages (the summary left out), and of the tools as OpenAI function
    tools (`strict` null when unset), each times 1.3, truncated."""
    dumped = []
    for tool in tools:
        function = tool["function"]
        head = {k: function.get(k) for k in ("name", "description", "parameters", "strict")}
        dumped.append({"function": {**head, **function}, "type": "function"})

    def estimate(value: Any) -> int:
        return math.ceil(len(json.dumps(value).encode()) / 4)

    return int(estimate([system, *kept]) * 1.3) + int(estimate(dumped) * 1.3)


def test_the_size_after_an_overflow_compaction_is_lettas_estimate(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = agent_with_history(client, mock_llm)
    mock_llm.script(Reply.overflow(), Reply.text("Summary before retry."), Reply.text("after the retry"))
    response = send(http, agent_id, "hello", include_compaction_messages=True)
    assert response.status_code == 200, response.text
    first, retry = mock_llm.requests[0], mock_llm.requests[2]
    # Counted: the system prompt the turn started with, the kept rows and the new input (the retry's, after the
    # summary), and the tools.
    expected = letta_estimate_after(first["messages"][0], retry["messages"][2:], retry["tools"])
    stats = json.loads(response.json()["messages"][0]["content"])["compaction_stats"]
    assert stats["context_tokens_after"] == expected


def test_the_size_after_a_post_step_compaction_is_lettas_estimate(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = agent_with_history(client, mock_llm, turns=6)
    mock_llm.script(Reply.text("x").reporting(3700), Reply.text("Earlier: greetings."))
    response = send(http, agent_id, "hello", include_compaction_messages=True)
    assert response.status_code == 200, response.text
    step = mock_llm.requests[0]
    mock_llm.script(Reply.text("next"))
    send(http, agent_id, "again")
    after = mock_llm.requests[-1]
    kept = after["messages"][2:-1]  # between the summary and the next input
    assert kept, "the sliding window kept the newest turns"
    expected = letta_estimate_after(step["messages"][0], kept, step["tools"])
    stats = json.loads(response.json()["messages"][1]["content"])["compaction_stats"]
    assert response.json()["usage"]["context_tokens"] == stats["context_tokens_after"] == expected


def test_a_claude_agents_size_after_a_compaction_asks_the_provider_nothing(claude: Letta, mock_llm: MockLLM) -> None:
    agent = claude.agents.create(
        model="anthropic/claude-sonnet-4-5-20250929", context_window_limit=WINDOW, include_base_tools=False
    )
    stats = None
    for i in range(8):
        mock_llm.script(Reply.text(f"reply {i}"), Reply.text(f"reply {i}"))
        response = claude.agents.messages.create(agent.id, input=f"message {i}: " + "lorem ipsum " * 150)
        alerts = [m for m in response.messages if m.message_type == "user_message"]
        if alerts:
            stats = json.loads(alerts[0].content)["compaction_stats"]  # type: ignore[union-attr, arg-type]
            break
    assert stats is not None, "the window filled up"
    # Letta asked Anthropic's count_tokens API for this size; memlet counts locally.
    assert {r["_api"] for r in mock_llm.requests} == {"anthropic"}
    assert 0 < stats["context_tokens_after"] < WINDOW
