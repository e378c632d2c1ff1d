"""The context window report's token counts, as Letta 0.16.8 counts them.

Letta estimated every model's tokens but Claude's and Gemini's as UTF-8 bytes / 4, rounded up: of each section's
text, of the in-context messages' JSON and of the tools' JSON. For Claude it asked Anthropic's count_tokens API;
memlet makes no call and counts locally.
"""

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api import test_anthropic_api as anthropic
from tests.api.test_context_api import make_agent, send
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply


@pytest.fixture
def anthropic_http(claude_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=claude_server.base_url, timeout=60) as http:
        yield http


def estimate(text: str) -> int:
    return math.ceil(len(text.encode()) / 4)


def test_an_openai_agents_counts_are_lettas_byte_estimate(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = make_agent(client)
    mock_llm.script(Reply.text("Hi Bob, nice to meet you. Ça va?"))
    send(http, agent.id, "hello there, I am Bob")
    report = http.get(f"/v1/agents/{agent.id}/context").json()
    sections = {
        "num_tokens_system": "system_prompt",
        "num_tokens_core_memory": "core_memory",
        "num_tokens_external_memory_summary": "external_memory_summary",
        "num_tokens_tool_usage_rules": "tool_usage_rules",
    }
    for count, section in sections.items():
        assert report[count] == estimate(report[section] or ""), count
    # The tools as Letta dumped them: OpenAI function tools, `strict` null when unset.
    dumped = []
    for tool in report["functions_definitions"]:
        function = tool["function"]
        head = {k: function.get(k) for k in ("name", "description", "parameters", "strict")}
        dumped.append({"function": {**head, **function}, "type": "function"})
    assert report["num_tokens_functions_definitions"] == estimate(json.dumps(dumped))
    # The messages as the model gets them (the next request's, without its system prompt and new input).
    mock_llm.script(Reply.text("Bye."))
    send(http, agent.id, "bye")
    buffer = mock_llm.requests[-1]["messages"][1:-1]
    assert len(buffer) == report["num_messages"] - 1
    assert report["num_tokens_messages"] == estimate(json.dumps(buffer))
    parts = [k for k in report if k.startswith("num_tokens_")]
    assert report["context_window_size_current"] == sum(report[k] for k in parts)


def test_a_claude_agents_report_asks_the_provider_nothing(
    claude: Letta,
    anthropic_http: httpx.Client,
    mock_llm: MockLLM,
) -> None:
    agent = anthropic.make_agent(claude)
    mock_llm.script(Reply.text("Hello Bob."))
    anthropic.say(claude, agent.id, "hi")
    calls = len(mock_llm.requests)
    report: dict[str, Any] = anthropic_http.get(f"/v1/agents/{agent.id}/context").json()
    assert len(mock_llm.requests) == calls
    assert report["num_tokens_core_memory"] > 0 and report["num_tokens_messages"] > 0
