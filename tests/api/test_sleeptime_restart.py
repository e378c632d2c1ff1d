"""Sleeptime runs are durable: a queued sleeptime run survives `kill -9` of the server and runs once after the
restart (Letta runs them as in-process tasks, lost on restart). `memlet server` runs as a subprocess."""

import signal
from pathlib import Path
from typing import Any

import httpx

from tests.api.sleeptime_support import EMBEDDING, MODEL, SLEEPTIME_PROMPT_MARK, sleeptime_requests, wait_for
from tests.api.test_security_runs_restart import Server, fresh_db
from tests.mock_llm import MockLLM, Reply

__all__ = ["fresh_db"]  # the fixture, shared with the run-restart tests


def turn(url: str, mock: MockLLM, agent_id: str, text: str) -> dict[str, Any]:
    mock.script(Reply.tool_call("send_message", {"message": f"re: {text}"}))
    body = {"messages": [{"role": "user", "content": text}]}
    response = httpx.post(f"{url}/v1/agents/{agent_id}/messages", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return dict(response.json())


def run(url: str, run_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/v1/runs/{run_id}", timeout=30).json())


def setup_agent(url: str) -> tuple[str, str]:
    """A main agent with enable_sleeptime whose group fires after every turn; returns (main, sleeptime) ids."""
    body = {
        "name": "durable",
        "model": MODEL,
        "embedding": EMBEDDING,
        "enable_sleeptime": True,
        "memory_blocks": [{"label": "human", "value": "Nothing known yet."}],
    }
    main = httpx.post(f"{url}/v1/agents/", json=body, timeout=30).json()["id"]
    (group,) = httpx.get(f"{url}/v1/groups/", timeout=30).json()
    config = {"manager_config": {"manager_type": "sleeptime", "sleeptime_agent_frequency": 1}}
    assert httpx.patch(f"{url}/v1/groups/{group['id']}", json=config, timeout=30).status_code == 200
    return main, group["agent_ids"][0]


def reviews_of(mock: MockLLM, text: str) -> list[dict[str, Any]]:
    """The sleeptime requests that start a run whose transcript holds `text`."""
    return [
        r
        for r in sleeptime_requests(mock)
        if r["messages"][-1]["role"] == "user" and text in str(r["messages"][-1]["content"])
    ]


def test_a_queued_sleeptime_run_survives_kill_9(fresh_db: str, mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.reset()
    mock_llm.script_when(
        SLEEPTIME_PROMPT_MARK,
        Reply.delay(120, then=Reply.tool_call("memory_finish_edits", {})),  # the first run stalls in the LLM
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Reviewed after the restart."}),
        Reply.tool_call("memory_finish_edits", {}),
    )
    first = Server(fresh_db, mock_llm, tmp_path / "server.log")
    main, helper = setup_agent(first.url)
    stalled = turn(first.url, mock_llm, main, "turn 1")["usage"]["run_ids"][0]
    wait_for(lambda: len(sleeptime_requests(mock_llm)) == 1, "the first sleeptime run to reach the LLM")
    queued = turn(first.url, mock_llm, main, "turn 2")["usage"]["run_ids"][0]
    joined = turn(first.url, mock_llm, main, "turn 3")["usage"]["run_ids"][0]
    assert joined == queued != stalled  # one run in flight per sleeptime agent; later firings join the queued one
    assert (run(first.url, stalled)["status"], run(first.url, queued)["status"]) == ("running", "created")
    first.stop(signal.SIGKILL)

    second = Server(fresh_db, mock_llm, tmp_path / "server.log")
    try:
        wait_for(lambda: run(second.url, queued)["status"] == "completed", "the queued run to complete")
        assert run(second.url, stalled)["status"] == "failed"
        (review,) = reviews_of(mock_llm, "user: turn 3")
        sent = review["messages"][-1]["content"]
        assert sent.startswith("<system-reminder>") and "user: turn 2" in sent and "user: turn 1" not in sent
        human = httpx.get(f"{second.url}/v1/agents/{main}/core-memory/blocks/human", timeout=30).json()
        assert human["value"].count("Reviewed after the restart.") == 1
        runs = httpx.get(f"{second.url}/v1/runs/", params={"agent_id": helper}, timeout=30).json()
        assert sorted(r["id"] for r in runs) == sorted([stalled, queued])
    finally:
        second.stop(signal.SIGTERM)
    assert len(reviews_of(mock_llm, "user: turn 3")) == 1  # ran once, also after the server stopped
