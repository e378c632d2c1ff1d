"""Responses as Letta 0.16.8 returns them (issue #11 item 2), through letta-client against the live server.

V2 heartbeats are stored but never returned; a blocking V2 send's last allowed step stops with max_steps; an error
after a letta_v1 stream started is an internal_error; a cancel interrupts an LLM call in flight and the stream
ends with stop_reason cancelled and [DONE].
"""

import json
import threading
import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_background_streams import server_process  # noqa: F401 (a second memlet process)
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    blocks = [{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}]
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=blocks, **kwargs)  # type: ignore[arg-type]


def sse_events(text: str) -> list[tuple[str | None, str]]:
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = None, ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        events.append((name, data))
    return events


def heartbeat_texts(client: Letta, agent_id: str) -> list[str]:
    history = client.agents.messages.list(agent_id, limit=100, order="asc").items
    texts = [str(m.content) for m in history if m.message_type == "user_message"]
    return [t for t in texts if '"heartbeat"' in t]


SEARCH = {"thinking": "Look it up.", "query": "tea", "request_heartbeat": True}
REPLY = {"thinking": "Answer.", "message": "Done."}


def test_v2_heartbeats_are_stored_but_never_returned(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("conversation_search", SEARCH), Reply.tool_call("send_message", REPLY))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "tea?"}])
    kinds = [m.message_type for m in response.messages]
    assert "user_message" not in kinds and kinds[-1] == "assistant_message"
    assert len(heartbeat_texts(client, agent.id)) == 1  # stored: the model read it on its second request

    mock_llm.script(Reply.tool_call("conversation_search", SEARCH), Reply.tool_call("send_message", REPLY))
    streamed = http.post(
        f"/v1/agents/{agent.id}/messages/stream", json={"messages": [{"role": "user", "content": "again"}]}
    )
    types = [json.loads(data).get("message_type") for _, data in sse_events(streamed.text) if data != "[DONE]"]
    assert "user_message" not in types and "assistant_message" in types
    assert len(heartbeat_texts(client, agent.id)) == 2


def test_v2_blocking_send_stops_with_max_steps_on_its_last_step(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("conversation_search", SEARCH))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "tea?"}], max_steps=1)
    assert response.stop_reason.stop_reason == "max_steps"
    assert len(mock_llm.requests) == 1
    assert heartbeat_texts(client, agent.id) == []  # the last step asks for no more turns
    # Even a reply that ends the turn is reported as max_steps on the last allowed step, as in Letta's step().
    mock_llm.script(Reply.tool_call("send_message", REPLY))
    done = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}], max_steps=1)
    assert done.stop_reason.stop_reason == "max_steps"
    # A stream (Letta's stream()) keeps end_turn.
    mock_llm.script(Reply.tool_call("send_message", REPLY))
    streamed = http.post(
        f"/v1/agents/{agent.id}/messages/stream",
        json={"messages": [{"role": "user", "content": "hi"}], "max_steps": 1},
    )
    stops = [json.loads(d) for _, d in sse_events(streamed.text) if '"stop_reason"' in d]
    assert stops == [{"message_type": "stop_reason", "stop_reason": "end_turn"}]


def test_error_after_a_v1_stream_started_is_internal_error(
    http: httpx.Client, client: Letta, mock_llm: MockLLM
) -> None:
    agent = make_agent(client)
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "tea"}),
        Reply.error(500, times=10),
    )
    response = http.post(
        f"/v1/agents/{agent.id}/messages/stream", json={"messages": [{"role": "user", "content": "x"}]}
    )
    events = sse_events(response.text)
    assert any(json.loads(d).get("message_type") == "tool_return_message" for n, d in events if d != "[DONE]")
    name, data = events[-2]
    error = json.loads(data)
    assert name == "error" and error["error_type"] == "internal_error"
    assert error["message"] == "An error occurred during agent execution." and error["detail"]
    assert json.loads(events[-3][1]) == {"message_type": "stop_reason", "stop_reason": "llm_api_error"}


def test_cancel_interrupts_a_slow_llm_call_within_a_second(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    mock_llm.script(Reply.delay(5, Reply.text("too late")))
    chunks: list[Any] = []
    ended: list[float] = []

    def consume() -> None:
        stream = client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "slow"}])
        chunks.extend(stream)
        ended.append(time.monotonic())

    reader = threading.Thread(target=consume)
    reader.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mock_llm.requests, "the LLM call never started"
    time.sleep(0.3)  # well inside the 5 s reply
    cancelled_at = time.monotonic()
    [run_id] = client.agents.messages.cancel(agent.id)  # type: ignore[misc]
    reader.join(10)
    assert ended and ended[0] - cancelled_at < 1.0
    kinds = [getattr(c, "message_type", None) for c in chunks]
    assert kinds[-1] == "stop_reason" and chunks[-1].stop_reason == "cancelled"
    assert "usage_statistics" not in kinds and "assistant_message" not in kinds
    run = client.runs.retrieve(run_id)
    assert run.status == "cancelled" and run.stop_reason == "cancelled"
    # The agent is free again at once, and the interrupted reply left nothing in its history.
    mock_llm.script(Reply.text("back"))
    again = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert again.messages[-1].content == "back"  # type: ignore[union-attr]
    history = client.agents.messages.list(agent.id, limit=50).items
    assert "too late" not in json.dumps([str(m) for m in history])


NAP = '''def nap() -> str:
    """Sleep a while, then answer.
    """
    import time

    time.sleep(5)
    return "woke"
'''


def test_cancel_interrupts_a_running_tool_within_a_second(client: Letta, mock_llm: MockLLM) -> None:
    tool = client.tools.create(source_code=NAP)
    agent = make_agent(client, tool_ids=[tool.id])
    mock_llm.script(Reply.tool_call("nap", {}, id="call_nap"), Reply.text("rested"))
    ended: list[float] = []
    chunks: list[Any] = []

    def consume() -> None:
        chunks.extend(client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "nap"}]))
        ended.append(time.monotonic())

    reader = threading.Thread(target=consume)
    reader.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the tool is sleeping in its sandbox now
    cancelled_at = time.monotonic()
    client.agents.messages.cancel(agent.id)
    reader.join(10)
    assert ended and ended[0] - cancelled_at < 1.0
    assert chunks[-1].message_type == "stop_reason" and chunks[-1].stop_reason == "cancelled"
    assert len(mock_llm.requests) == 1  # the loop never went on to a second step
    history = client.agents.messages.list(agent.id, limit=50).items
    assert "tool_return_message" not in [m.message_type for m in history]


def test_a_cancel_sent_to_another_process_is_noticed_within_a_second(
    client: Letta,
    server_process: str,  # noqa: F811 (the fixture imported above)
    mock_llm: MockLLM,
) -> None:
    # Another OS process shares only the database: the loop notices the cancel by polling its run row.
    agent = make_agent(client)
    mock_llm.script(Reply.delay(5, Reply.text("too late")))
    ended: list[float] = []
    chunks: list[Any] = []

    def consume() -> None:
        chunks.extend(client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "slow"}]))
        ended.append(time.monotonic())

    reader = threading.Thread(target=consume)
    reader.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    cancelled_at = time.monotonic()
    response = httpx.post(f"{server_process}/v1/agents/{agent.id}/messages/cancel", timeout=10)
    assert response.status_code == 200 and list(response.json().values()) == ["cancelled"]
    reader.join(10)
    assert ended and ended[0] - cancelled_at < 1.0
    assert chunks[-1].message_type == "stop_reason" and chunks[-1].stop_reason == "cancelled"


def test_a_v2_send_ignores_a_custom_assistant_message_tool(client: Letta, mock_llm: MockLLM) -> None:
    # Letta's V2 loop renders its response with the default tool name and kwarg, whatever the request names.
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    mock_llm.script(Reply.tool_call("send_message", REPLY))
    response = client.agents.messages.create(
        agent.id,
        messages=[{"role": "user", "content": "hi"}],
        assistant_message_tool_name="shout",
        assistant_message_tool_kwarg="text",
    )
    assert [m.message_type for m in response.messages] == ["reasoning_message", "assistant_message"]
    assert response.messages[-1].content == "Done."
    mock_llm.script(Reply.tool_call("send_message", REPLY))
    plain = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "hi"}], use_assistant_message=False
    )
    assert [m.message_type for m in plain.messages] == ["reasoning_message", "tool_call_message", "tool_return_message"]
