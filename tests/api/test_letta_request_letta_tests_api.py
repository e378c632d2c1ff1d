"""What Letta 0.16.8's test_letta_request_schema.py pins, seen through a send: `max_steps` of 0 or below is
accepted, and the turn takes no step (no model call, nothing stored, `end_turn`), as Letta's loop runs
`range(max_steps)` times. (Regression tests: memlet already did this.)
"""

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


@pytest.mark.parametrize("max_steps", [0, -1])
@pytest.mark.parametrize("streaming", [False, True])
def test_no_steps_allowed_is_an_empty_end_turn(
    client: Letta, mock_llm: MockLLM, max_steps: int, streaming: bool
) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    mock_llm.script(Reply.text("never sent"))
    if streaming:
        events = [e for e in client.agents.messages.stream(agent.id, input="hi", max_steps=max_steps)]
        kinds = [e.message_type for e in events if e.message_type != "ping"]
        assert kinds == ["stop_reason", "usage_statistics"]
        stop: object = events[-2].stop_reason  # type: ignore[union-attr]
        usage: object = events[-1]
    else:
        response = client.agents.messages.create(agent.id, input="hi", max_steps=max_steps)
        assert response.messages == []
        stop, usage = response.stop_reason.stop_reason, response.usage
    assert stop == "end_turn"
    assert usage.step_count == 0 and usage.total_tokens == 0  # type: ignore[attr-defined]
    assert mock_llm.requests == []
    assert [m.message_type for m in client.agents.messages.list(agent.id).items] == ["system_message"]
