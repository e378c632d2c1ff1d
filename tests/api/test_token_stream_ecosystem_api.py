"""Token streams as the Vercel AI SDK provider for Letta (`@letta-ai/vercel-ai-sdk-provider` 1.4.0) reads them.

The provider sends `POST /v1/agents/{id}/messages/stream` with the user's last message as text parts and its
`providerOptions.letta.agent` options (`stream_tokens`, `background`, `include_pings`, ...). It gathers the
`tool_call_message` fragments of one call by `tool_call.tool_call_id`, and once their arguments parse as JSON
emits the tool call, with the completing fragment's `tool_call` fields (`name`, `arguments`) as its metadata;
reasoning fragments pass on their `source` and every fragment its `otid`. Each test drives memlet the same way
through the official letta-client.
"""

import json
from typing import Any

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

SONNET = "anthropic/claude-sonnet-4-5-20250929"
GPT = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def streamed_tool_calls(client: Letta, model: str, mock_llm: MockLLM, **options: Any) -> list[dict[str, Any]]:
    """The tool_call_message fragments of one token-streamed turn whose model searches, then answers."""
    agent = client.agents.create(model=model, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Sam"}])
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "tea"}, id="call_tea", reasoning="Look it up."),
        Reply.text("Nothing about tea."),
    )
    chunks = client.agents.messages.stream(
        agent.id,
        messages=[{"role": "user", "content": [{"type": "text", "text": "tea?"}]}],
        stream_tokens=True,
        **options,
    )
    return [c.tool_call.model_dump(exclude_none=True) for c in chunks if c.message_type == "tool_call_message"]


def completing_fragment(fragments: list[dict[str, Any]]) -> dict[str, Any]:
    """The fragment after which the call's arguments parse as JSON (where the provider emits the call)."""
    text = ""
    for fragment in fragments:
        text += fragment.get("arguments", "")
        try:
            json.loads(text)
        except ValueError:
            continue
        return fragment
    raise AssertionError(f"the arguments never completed: {text!r}")


class TestToolCallFragments:
    def test_claude_names_its_tool_on_every_fragment(self, claude: Letta, mock_llm: MockLLM) -> None:
        # Letta's Anthropic stream labels each argument fragment with the call's name and id.
        for options in ({}, {"background": True}):
            fragments = streamed_tool_calls(claude, SONNET, mock_llm, **options)
            assert len(fragments) > 2  # the head, then the arguments in pieces
            assert all(f["tool_call_id"] == "call_tea" for f in fragments)
            assert all(f["name"] == "conversation_search" for f in fragments)
            assert completing_fragment(fragments)["name"] == "conversation_search"
            assert "".join(f.get("arguments", "") for f in fragments) == '{"query": "tea"}'

    def test_an_openai_model_names_it_on_the_head_only(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta's OpenAI stream passes the name on only where the provider's delta has it: the first one.
        fragments = streamed_tool_calls(client, GPT, mock_llm)
        assert all(f["tool_call_id"] == "call_tea" for f in fragments)
        assert fragments[0]["name"] == "conversation_search"
        assert all("name" not in f for f in fragments[1:])
        assert "name" not in completing_fragment(fragments)


def streamed_reasoning(client: Letta, agent_id: str) -> list[tuple[str, str]]:
    """(source, text) of each reasoning fragment of a token-streamed turn, as the provider's metadata shows them."""
    chunks = client.agents.messages.stream(
        agent_id, messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}], stream_tokens=True
    )
    return [(c.source, c.reasoning) for c in chunks if c.message_type == "reasoning_message"]


class TestReasoningSource:
    def test_a_v2_claude_agents_thinking_streams_as_the_reasoners(self, claude: Letta, mock_llm: MockLLM) -> None:
        # Letta's V2 loop streams Claude's thinking blocks with source reasoner_model, as its history lists them.
        agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hi Bob!"}, reasoning="Greet him warmly."))
        fragments = streamed_reasoning(claude, agent.id)
        assert "".join(text for _, text in fragments) == "Greet him warmly."
        assert {source for source, _ in fragments} == {"reasoner_model"}
        listed = [m for m in claude.agents.messages.list(agent.id) if m.message_type == "reasoning_message"]
        assert [(m.source, m.reasoning) for m in listed][-1] == ("reasoner_model", "Greet him warmly.")

    def test_a_v2_agents_written_thoughts_stream_as_the_non_reasoners(self, claude: Letta, mock_llm: MockLLM) -> None:
        # A Claude that does not think natively writes its thoughts in its text (after the `<thinking>` prefill).
        agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, agent_type="memgpt_v2_agent", reasoning=False)
        mock_llm.script(Reply.tool_call("send_message", {"message": "Hi!"}, content="Bob says hello.</thinking>"))
        fragments = streamed_reasoning(claude, agent.id)
        assert "".join(text for _, text in fragments) == "Bob says hello."
        assert {source for source, _ in fragments} == {"non_reasoner_model"}


def test_a_v2_claude_agent_names_its_tool_on_every_fragment(claude: Letta, mock_llm: MockLLM) -> None:
    # Letta's V2 loop labels Claude's argument fragments with the call's name too.
    agent = claude.agents.create(model=SONNET, embedding=EMBEDDING, agent_type="memgpt_v2_agent")
    mock_llm.script(
        Reply.tool_call("conversation_search", {"query": "tea", "request_heartbeat": True}, id="call_tea"),
        Reply.tool_call("send_message", {"message": "No tea."}),
    )
    chunks = claude.agents.messages.stream(
        agent.id, messages=[{"role": "user", "content": [{"type": "text", "text": "tea?"}]}], stream_tokens=True
    )
    fragments = [c.tool_call.model_dump(exclude_none=True) for c in chunks if c.message_type == "tool_call_message"]
    assert len(fragments) > 2
    assert all(f == {**f, "name": "conversation_search", "tool_call_id": "call_tea"} for f in fragments)
    assert completing_fragment(fragments)["name"] == "conversation_search"


def test_claudes_redacted_thinking_streams_when_it_starts(claude: Letta, mock_llm: MockLLM) -> None:
    # Letta streams a redacted_thinking block as it starts, before the text after it, numbered as listed later.
    agent = claude.agents.create(model=SONNET, embedding=EMBEDDING)
    mock_llm.script(Reply(content="Sure thing.", redacted="opaque-bytes"))
    chunks = claude.agents.messages.stream(
        agent.id, messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}], stream_tokens=True
    )
    shown = [c for c in chunks if c.message_type in ("hidden_reasoning_message", "assistant_message")]
    assert [c.message_type for c in shown][:2] == ["hidden_reasoning_message", "assistant_message"]
    assert [(c.state, c.hidden_reasoning) for c in shown if c.message_type == "hidden_reasoning_message"] == [
        ("redacted", "opaque-bytes")
    ]
    assert "".join(c.content for c in shown if c.message_type == "assistant_message") == "Sure thing."
    listed = [m for m in claude.agents.messages.list(agent.id) if m.message_type in {c.message_type for c in shown}]
    assert {(c.message_type, c.otid) for c in shown} == {(m.message_type, m.otid) for m in listed}
