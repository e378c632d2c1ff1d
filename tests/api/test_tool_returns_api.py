"""What a tool's return becomes in the agent loop, as in Letta: cut to the tool's `return_char_limit` with a note,
and coerced the way Letta's loop coerces it (text stays text, a dict stays an object, other values become their
Python text). Checked in the response a client gets and in the request the model gets next."""

import json
from typing import Any

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

RETURNS = '''
def give(kind: str, n: int) -> object:
    """Return a value of some kind.

    Args:
        kind: text, list, number, flag or object.
        n: A size.
    """
    values = {
        "text": "x" * n,
        "list": [1, "a", True, None],
        "number": n,
        "flag": n > 0,
        "object": {"key": "v" * n},
    }
    return values[kind]
'''


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def agent_with_give(client: Letta, return_char_limit: int) -> Any:
    tool = client.tools.create(source_code=RETURNS, return_char_limit=return_char_limit)
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, include_base_tools=False)
    client.agents.tools.attach(tool.id, agent_id=agent.id)
    return agent


def give(client: Letta, mock_llm: MockLLM, agent_id: str, kind: str, n: int) -> tuple[Any, Any]:
    """Have the model call `give`; the `message` of the packed return in the model's next request, and the
    response's tool return."""
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("give", {"kind": kind, "n": n}), Reply.text("ok"))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "go"}])
    returned = next(m for m in response.messages if m.message_type == "tool_return_message")
    sent = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    return json.loads(sent)["message"], returned.tool_return


def note(length: int, limit: int) -> str:
    return f"... [NOTE: function output was truncated since it exceeded the character limit ({length} > {limit})]"


def noted(text: str, limit: int) -> str:
    """Letta's first pass (its tool execution manager): the whole text with a note, before the loop cuts it."""
    return (
        f"{text}... [NOTE: function output was truncated since it exceeded the character limit: {len(text)} > {limit}]"
    )


def test_a_long_return_is_cut_to_the_tools_limit(client: Letta, mock_llm: MockLLM) -> None:
    agent = agent_with_give(client, return_char_limit=100)
    sent, shown = give(client, mock_llm, agent.id, "text", 250)
    # The count is that of the text with Letta's first note, as Letta's model read it.
    assert sent == "x" * 100 + note(len(noted("x" * 250, 100)), 100)
    assert shown == sent
    sent, _ = give(client, mock_llm, agent.id, "text", 100)
    assert sent == "x" * 100  # at the limit: whole


def test_an_object_stays_an_object_until_its_json_passes_the_limit(client: Letta, mock_llm: MockLLM) -> None:
    agent = agent_with_give(client, return_char_limit=100)
    sent, _ = give(client, mock_llm, agent.id, "object", 10)
    assert sent == {"key": "v" * 10}
    sent, _ = give(client, mock_llm, agent.id, "object", 200)
    # Past the limit in compact JSON, Letta's first pass made it that text; the loop then cuts it.
    first = noted(json.dumps({"key": "v" * 200}), 100)
    assert sent == first[:100] + note(len(first), 100)


def test_an_object_within_the_limit_compact_but_not_indented_is_cut_indented(client: Letta, mock_llm: MockLLM) -> None:
    agent = agent_with_give(client, return_char_limit=100)
    sent, _ = give(client, mock_llm, agent.id, "object", 86)  # 97 characters compact, 101 indented
    encoded = json.dumps({"key": "v" * 86}, indent=2)
    assert sent == encoded[:100] + note(len(encoded), 100)


def test_the_run_endpoint_answers_the_whole_return_with_the_note(client: Letta) -> None:
    agent = agent_with_give(client, return_char_limit=100)
    ran = client.agents.tools.run(agent_id=agent.id, tool_name="give", args={"kind": "text", "n": 250})
    assert (ran.status, ran.func_return) == ("success", noted("x" * 250, 100))
    ran = client.agents.tools.run(agent_id=agent.id, tool_name="give", args={"kind": "object", "n": 200})
    assert ran.func_return == noted(json.dumps({"key": "v" * 200}), 100)
    ran = client.agents.tools.run(agent_id=agent.id, tool_name="give", args={"kind": "object", "n": 10})
    assert ran.func_return == {"key": "v" * 10}


@pytest.mark.parametrize(
    ("kind", "n", "text"), [("list", 1, "[1, 'a', True, None]"), ("number", 7, "7"), ("flag", 1, "True")]
)
def test_other_values_reach_the_model_as_their_python_text(
    client: Letta, mock_llm: MockLLM, kind: str, n: int, text: str
) -> None:
    agent = agent_with_give(client, return_char_limit=1000)
    sent, _ = give(client, mock_llm, agent.id, kind, n)
    assert sent == text


def test_arguments_the_tool_does_not_declare_are_dropped_and_text_numbers_converted(
    client: Letta, mock_llm: MockLLM
) -> None:
    agent = agent_with_give(client, return_char_limit=1000)
    mock_llm.script(Reply.tool_call("give", {"kind": "number", "n": "12", "bogus": 1}), Reply.text("ok"))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
    returned = next(m for m in response.messages if m.message_type == "tool_return_message")
    assert (returned.status, returned.tool_return) == ("success", "12")
