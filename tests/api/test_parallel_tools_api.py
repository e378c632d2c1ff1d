"""Several tool calls in one response, scheduled as Letta 0.16.8's letta_v1 loop schedules them
(`letta_agent_v3.py` `_handle_ai_response`): with more than one call, those whose tool has
`enable_parallel_execution` run side by side first, then the others one after another; the returns come back in
call order, so what the model reads next does not depend on the order they ran in.

Concurrency is read from the tools' own clocks: each call reports when it started and ended. Calls run one after
another can never overlap, so the test fails without concurrency whatever the machine's load; with it, the two
calls overlap unless starting the second sandbox took longer than the first call's whole sleep.
"""

import re
import threading
import time
from typing import Any

import pytest
from letta_client import Letta

from tests.api.test_approvals_letta_tests_api import SECRET
from tests.mock_llm import Call, MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
SLEEP_S = 4


def timed(name: str, sleep_s: float) -> str:
    """A tool that sleeps, then reports its start and end on the wall clock."""
    return f'''def {name}(label: str) -> str:
    """Wait a while and say when.

    Args:
        label: A name for this call.
    """
    import time

    started = time.time()
    time.sleep({sleep_s})
    return f"{{label}} from {{started:.6f}} to {{time.time():.6f}}"
'''


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, *tool_ids: str) -> Any:
    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        include_base_tools=False,
        include_base_tool_rules=False,
        tool_ids=list(tool_ids),
        tool_rules=[],
    )
    return client.agents.update(agent.id, parallel_tool_calls=True)


def span(text: str) -> tuple[float, float]:
    found = re.search(r"from (\d+\.\d+) to (\d+\.\d+)", text)
    assert found, text
    return float(found.group(1)), float(found.group(2))


def test_parallel_tools_run_side_by_side_then_the_others(client: Letta, mock_llm: MockLLM) -> None:
    side_a = client.tools.create(source_code=timed("side_a", SLEEP_S), enable_parallel_execution=True)
    side_b = client.tools.create(source_code=timed("side_b", SLEEP_S), enable_parallel_execution=True)
    alone = client.tools.create(source_code=timed("alone", 0))
    agent = make_agent(client, side_a.id, side_b.id, alone.id)
    # The serial tool comes first in the response, yet runs after the parallel ones, as in Letta.
    calls = [Call("alone", {"label": "c"}, "call_c"), Call("side_a", {"label": "a"}, "call_a")]
    mock_llm.script(Reply.tool_calls(*calls, Call("side_b", {"label": "b"}, "call_b")), Reply.text("Done."))

    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])

    assert response.stop_reason.stop_reason == "end_turn"
    returned = next(m for m in response.messages if m.message_type == "tool_return_message")
    # Stored, shown and sent back in call order.
    assert [r.tool_call_id for r in returned.tool_returns] == ["call_c", "call_a", "call_b"]
    assert [r.status for r in returned.tool_returns] == ["success"] * 3
    sent = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == ["call_c", "call_a", "call_b"]
    assert all(f"{label} from" in str(m["content"]) for m, label in zip(sent, "cab", strict=True))
    (c_start, _), (a_start, a_end), (b_start, b_end) = (span(str(r.tool_return)) for r in returned.tool_returns)
    assert a_start < b_end and b_start < a_end, "the two parallel calls did not overlap"
    assert c_start >= max(a_end, b_end) - 0.01, "the serial call did not wait for the parallel ones"


def test_parallel_tools_answered_by_an_approval_run_side_by_side(client: Letta, mock_llm: MockLLM) -> None:
    """The approved calls and the ungated ones held beside them run as one batch, as Letta's loop runs them."""
    gated = client.tools.create(source_code=SECRET, default_requires_approval=True)
    side_a = client.tools.create(source_code=timed("side_a", SLEEP_S), enable_parallel_execution=True)
    side_b = client.tools.create(source_code=timed("side_b", SLEEP_S), enable_parallel_execution=True)
    agent = make_agent(client, gated.id, side_a.id, side_b.id)
    calls = [Call("side_a", {"label": "a"}, "call_a"), Call("side_b", {"label": "b"}, "call_b")]
    mock_llm.script(Reply.tool_calls(Call("get_secret_code_tool", {"input_text": "x"}, "call_gated"), *calls))
    asked = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
    assert asked.stop_reason.stop_reason == "requires_approval"

    mock_llm.script(Reply.text("Done."))
    answer = [{"type": "approval", "tool_call_id": "call_gated", "approve": True}]
    response = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": answer}])

    returned = response.messages[0]
    assert [r.tool_call_id for r in returned.tool_returns] == ["call_gated", "call_a", "call_b"]
    (a_start, a_end), (b_start, b_end) = (span(str(r.tool_return)) for r in returned.tool_returns[1:])
    assert a_start < b_end and b_start < a_end, "the two parallel calls did not overlap"


def test_parallel_builtin_searches_side_by_side_read_the_database(client: Letta, mock_llm: MockLLM) -> None:
    """conversation_search and archival_memory_search are parallel tools in Letta; run side by side they each read
    the database on their own (the turn's locked connection takes one statement at a time)."""
    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        include_base_tools=False,
        include_base_tool_rules=False,
        tools=["conversation_search", "archival_memory_search"],
        tool_rules=[],
    )
    client.agents.passages.create(agent.id, text="The river is called Ombra.")
    client.agents.update(agent.id, parallel_tool_calls=True)
    searches = [
        Call("conversation_search", {"query": "river"}, "call_1"),
        Call("archival_memory_search", {"query": "river"}, "call_2"),
        Call("conversation_search", {"query": "boat"}, "call_3"),
        Call("archival_memory_search", {"query": "boat"}, "call_4"),
    ]
    mock_llm.script(Reply.tool_calls(*searches), Reply.text("Done."))

    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "the river?"}])

    assert response.stop_reason.stop_reason == "end_turn"
    returned = next(m for m in response.messages if m.message_type == "tool_return_message")
    assert [r.tool_call_id for r in returned.tool_returns] == ["call_1", "call_2", "call_3", "call_4"]
    assert [r.status for r in returned.tool_returns] == ["success"] * 4, [r.tool_return for r in returned.tool_returns]
    assert "Ombra" in str(returned.tool_returns[1].tool_return)


def test_a_cancel_stops_parallel_calls_at_once(client: Letta, mock_llm: MockLLM) -> None:
    side_a = client.tools.create(source_code=timed("side_a", 20), enable_parallel_execution=True)
    side_b = client.tools.create(source_code=timed("side_b", 20), enable_parallel_execution=True)
    agent = make_agent(client, side_a.id, side_b.id)
    calls = [Call("side_a", {"label": "a"}, "call_a"), Call("side_b", {"label": "b"}, "call_b")]
    mock_llm.script(Reply.tool_calls(*calls), Reply.text("never"))
    ended: list[float] = []
    chunks: list[Any] = []

    def consume() -> None:
        chunks.extend(client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "go"}]))
        ended.append(time.monotonic())

    reader = threading.Thread(target=consume)
    reader.start()
    deadline = time.monotonic() + 10
    while not mock_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)  # both calls are sleeping in their sandboxes now
    cancelled_at = time.monotonic()
    client.agents.messages.cancel(agent.id)
    reader.join(15)
    assert ended and ended[0] - cancelled_at < 5.0  # far below the calls' 20 s
    assert chunks[-1].message_type == "stop_reason" and chunks[-1].stop_reason == "cancelled"
    assert len(mock_llm.requests) == 1
    history = client.agents.messages.list(agent.id, limit=50).items
    assert "tool_return_message" not in [m.message_type for m in history]
