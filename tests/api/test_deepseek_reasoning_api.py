"""DeepSeek's thinking mode: an assistant tool call goes back with its `reasoning_content` within a turn (DeepSeek
refuses a tool-call sub-request without it) and without it once the next user message starts a turn, as Letta's
DeepSeek client sends it. Through letta-client against the live server; the mock records what the model was sent.
"""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "Bob."}, {"label": "persona", "value": "I am Sam."}]


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, mock_llm: MockLLM, endpoint_type: str, **fields: Any) -> Any:
    config = {
        "model": "deepseek-reasoner",
        "model_endpoint_type": endpoint_type,
        "model_endpoint": mock_llm.base_url,
        "context_window": 64000,
        **fields,
    }
    return client.agents.create(llm_config=config, embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]


def assistant_reasoning(request: dict[str, Any]) -> list[tuple[bool, Any]]:
    """For each assistant message sent: whether it has tool calls, and its `reasoning_content` (absent: ...)."""
    return [
        (bool(m.get("tool_calls")), m.get("reasoning_content", ...))
        for m in request["messages"]
        if m["role"] == "assistant"
    ]


def search_then_answer(client: Letta, mock_llm: MockLLM, agent_id: str, reasoning: str | None) -> None:
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "tea"}, reasoning=reasoning),
        Reply.text("No tea yet.", reasoning="Nothing found."),
    )
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "tea?"}])  # type: ignore[list-item]
    assert response.messages[-1].content == "No tea yet."


def test_a_tool_call_carries_its_reasoning_within_the_turn(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm, "deepseek")
    search_then_answer(client, mock_llm, agent.id, "Search the history for tea.")
    first, second = mock_llm.requests[-2:]
    assert assistant_reasoning(first) == []  # a new turn: nothing to send back
    assert assistant_reasoning(second) == [(True, "Search the history for tea.")]

    # The next turn's first request drops it again; a call made without reasoning carries an empty one.
    search_then_answer(client, mock_llm, agent.id, None)
    first, second = mock_llm.requests[-2:]
    assert all(reasoning is ... for _, reasoning in assistant_reasoning(first))
    assert assistant_reasoning(second) == [
        (True, "Search the history for tea."),
        (False, "Nothing found."),
        (True, ""),
    ]


def test_other_endpoints_get_no_reasoning_content(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, mock_llm, "openai")
    search_then_answer(client, mock_llm, agent.id, "Search the history for tea.")
    assert assistant_reasoning(mock_llm.requests[-1]) == [(True, ...)]


def test_a_reasoner_gets_no_sampling_parameters(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Letta's DeepSeek client leaves temperature and frequency_penalty out for a `*reasoner*` model, in a step's
    request and a summary's; deepseek-chat keeps them."""
    sampled = {"temperature": 0.3, "frequency_penalty": 0.5}
    reasoner = make_agent(client, mock_llm, "deepseek", **sampled)
    chat = make_agent(client, mock_llm, "deepseek", model="deepseek-chat", **sampled)
    for agent, expected in ((reasoner, {}), (chat, sampled)):
        search_then_answer(client, mock_llm, agent.id, None)
        assert {k: v for k, v in mock_llm.requests[-1].items() if k in sampled} == expected
        mock_llm.script(Reply.text("They asked about tea."))
        summarized = http.post(f"/v1/agents/{agent.id}/summarize", json={"compaction_settings": {"mode": "all"}})
        assert summarized.status_code == 200, summarized.text
        summary = mock_llm.requests[-1]
        assert "tea" in str(summary["messages"]) and "tools" not in summary
        assert {k: v for k, v in summary.items() if k in sampled} == expected


def test_a_v2_agent_is_not_asked_for_a_thinking_argument(client: Letta, mock_llm: MockLLM) -> None:
    """Letta's DeepSeek client turns put_inner_thoughts_in_kwargs off: a V2 agent's tools carry no `thinking`
    argument and the text beside its call is its reasoning."""
    agent = client.agents.create(
        llm_config={  # type: ignore[arg-type]
            "model": "deepseek-chat",
            "model_endpoint_type": "deepseek",
            "model_endpoint": mock_llm.base_url,
            "context_window": 64000,
            "put_inner_thoughts_in_kwargs": True,
        },
        agent_type="memgpt_v2_agent",
        embedding=EMBEDDING,
        memory_blocks=BLOCKS,
    )
    mock_llm.script(Reply.tool_call("send_message", {"message": "Hi Bob."}, content="Bob is here."))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])  # type: ignore[list-item]
    shown = [(m.message_type, getattr(m, "reasoning", None) or getattr(m, "content", None)) for m in response.messages]
    assert shown == [("reasoning_message", "Bob is here."), ("assistant_message", "Hi Bob.")]
    tools = mock_llm.requests[-1]["tools"]
    assert tools and all("thinking" not in t["function"]["parameters"]["properties"] for t in tools)
