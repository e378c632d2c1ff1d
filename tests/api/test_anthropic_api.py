"""Agents on `anthropic/claude-...` handles, through the official letta-client, against the mock's messages API.

A live server of its own has ANTHROPIC_API_KEY set and Anthropic's base URL pointed at the mock; everything that
reached the "model" is read back from the mock's recorded requests.
"""

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.conftest import ANTHROPIC_KEY
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.mock_llm.anthropic_wire import usage_for

KEY = ANTHROPIC_KEY
SONNET = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]
EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture
def chttp(claude_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=claude_server.base_url, timeout=60) as client:
        yield client


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(model=SONNET, embedding=EMBEDDING, memory_blocks=BLOCKS, **kwargs)  # type: ignore[arg-type]


def say(client: Letta, agent_id: str, text: str) -> Any:
    return client.agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])


def sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


class TestCatalog:
    def test_claude_models_listed_with_the_key(self, claude: Letta) -> None:
        models = {m.handle: m for m in claude.models.list()}
        assert SONNET in models
        assert models[SONNET].model_endpoint_type == "anthropic"
        assert models[SONNET].context_window == 200_000

    def test_not_listed_without_the_key(self, client: Letta) -> None:
        assert not [m for m in client.models.list() if (m.handle or "").startswith("anthropic/")]


class TestTurns:
    def test_blocking_turn_through_messages_api(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        assert agent.llm_config.model_endpoint_type == "anthropic"
        mock_llm.script(Reply.text("Hello Bob."))
        response = say(claude, agent.id, "hi there")
        assert [m.content for m in response.messages if m.message_type == "assistant_message"] == ["Hello Bob."]
        [sent] = mock_llm.requests
        assert sent["_api"] == "anthropic" and sent["model"] == "claude-sonnet-4-5-20250929"
        assert mock_llm.authorizations[-1] == KEY  # the environment's key, sent to its own URL only
        # Prompt caching: the system prompt and the tools carry cache_control.
        assert sent["system"][-1]["cache_control"] == EPHEMERAL and "Bob" in sent["system"][-1]["text"]
        assert sent["tools"][-1]["cache_control"] == EPHEMERAL
        assert all("cache_control" not in t for t in sent["tools"][:-1])
        assert {"name", "description", "input_schema"} <= set(sent["tools"][0])
        assert sent["messages"][-1]["role"] == "user"
        assert "hi there" in json.dumps(sent["messages"][-1]["content"])

    def test_streamed_token_deltas(self, claude: Letta, chttp: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        mock_llm.script(Reply.text("one two three four"))
        body = {"messages": [{"role": "user", "content": "count"}], "stream_tokens": True}
        response = chttp.post(f"/v1/agents/{agent.id}/messages/stream", json=body)
        assert response.status_code == 200
        chunks = [c for c in sse_data(response.text) if c["message_type"] == "assistant_message"]
        assert [c["content"] for c in chunks] == ["one", " two", " three", " four"]
        assert len({c["id"] for c in chunks}) == 1
        assert mock_llm.requests[-1]["stream"] is True
        stored = [m for m in claude.agents.messages.list(agent.id) if m.message_type == "assistant_message"]
        assert [m.content for m in stored] == ["one two three four"]

    def test_tool_call_round_trip(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        mock_llm.script(
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}, id="toolu_tea"),
            Reply.text("Noted."),
        )
        response = say(claude, agent.id, "I like tea")
        types = [m.message_type for m in response.messages]
        assert "tool_call_message" in types and "tool_return_message" in types and types[-1] == "assistant_message"
        assert "Likes tea." in claude.agents.blocks.retrieve("human", agent_id=agent.id).value
        first, second = mock_llm.requests
        assert first["tool_choice"]["type"] == "auto"
        assistant, results = second["messages"][-2:]
        assert assistant["role"] == "assistant"
        tool_use = next(b for b in assistant["content"] if b["type"] == "tool_use")
        assert tool_use["id"] == "toolu_tea" and tool_use["input"] == {"label": "human", "new_string": "Likes tea."}
        result = next(b for b in results["content"] if b["type"] == "tool_result")
        assert results["role"] == "user" and result["tool_use_id"] == "toolu_tea"
        # The turn keeps its system prompt, so the cached prefix holds (as in Letta); the next turn reads the edit.
        assert second["system"] == first["system"] and "Likes tea." not in second["system"][-1]["text"]
        mock_llm.script(Reply.text("Sure."))
        say(claude, agent.id, "and?")
        assert "Likes tea." in mock_llm.requests[-1]["system"][-1]["text"]

    def test_memgpt_v2_agent_replies_through_send_message(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude, agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet Bob.", "message": "Hi Bob!"}))
        response = say(claude, agent.id, "hello")
        assert [m.content for m in response.messages if m.message_type == "assistant_message"] == ["Hi Bob!"]
        [sent] = mock_llm.requests
        send_message = next(t for t in sent["tools"] if t["name"] == "send_message")
        # A Claude reasoner thinks natively (put_inner_thoughts_in_kwargs is off): no `thinking` argument, as in Letta.
        assert not agent.llm_config.put_inner_thoughts_in_kwargs
        assert "thinking" not in send_message["input_schema"]["properties"]
        # V2 must call a tool; with native thinking on, Anthropic accepts only "auto" (Letta sends the same).
        assert sent["tool_choice"]["type"] == ("auto" if "thinking" in sent else "any")


def heartbeat_texts(body: dict[str, Any]) -> list[str]:
    """The texts of a request's user blocks that are heartbeats the loop wrote."""
    blocks = [b for m in body["messages"] if m["role"] == "user" for b in m["content"] if b["type"] == "text"]
    return [b["text"] for b in blocks if '"type": "heartbeat"' in b["text"]]


class TestLettaV1:
    def test_auto_even_when_a_rule_forces_a_call_and_no_heartbeats(self, claude: Letta, mock_llm: MockLLM) -> None:
        rules = [
            {"type": "run_first", "tool_name": "conversation_search"},
            {"type": "required_before_exit", "tool_name": "memory_insert"},
        ]
        agent = make_agent(claude, reasoning=False, tool_rules=rules)
        assert not agent.llm_config.enable_reasoner
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea"}),
            Reply.text("Done."),  # memory_insert is still owed: the loop goes on with a heartbeat
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "Tea."}),
            Reply.text("Saved."),
        )
        say(claude, agent.id, "remember tea")
        first, _, third, _ = mock_llm.requests
        assert [t["name"] for t in first["tools"]] == ["conversation_search"]
        assert first["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
        stored = [m.model_dump_json() for m in claude.agents.messages.list(agent.id)]
        assert any("ToolRuleViolated" in m for m in stored)  # the heartbeat is stored, but not sent
        assert heartbeat_texts(third) == []


class TestV2Heartbeats:
    def test_merged_into_the_tool_result_before_them(self, claude: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(claude, agent_type="memgpt_v2_agent")
        assert agent.llm_config.enable_reasoner
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea", "request_heartbeat": True}, reasoning="Look."),
            Reply.tool_call("send_message", {"message": "Nothing."}, reasoning="Answer."),
        )
        say(claude, agent.id, "what about tea?")
        stored = list(claude.agents.messages.list(agent.id))
        heartbeat = next(m.content for m in stored if m.message_type == "user_message" and "heartbeat" in m.content)
        last = mock_llm.requests[1]["messages"][-1]
        assert last["role"] == "user" and [b["type"] for b in last["content"]] == ["tool_result"]
        returned, joined, rest = last["content"][0]["content"].partition(f", {heartbeat}")
        assert joined and not rest and json.loads(returned)["message"]["message"] == "No results found."


def test_another_providers_call_ids_are_sanitized(claude: Letta, mock_llm: MockLLM) -> None:
    """A call id made by another provider's model ("Read:93", as Kimi writes them) goes to Claude with `_` for the
    characters Anthropic refuses, in the tool_use block and its result alike, as Letta sanitizes it."""
    agent = claude.agents.create(model="openai/gpt-4o-mini", embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]
    mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}, id="Read:93"), Reply.text("None."))
    say(claude, agent.id, "tea?")
    claude.agents.update(agent.id, model=SONNET)
    mock_llm.script(Reply.text("Hello from Claude."))
    say(claude, agent.id, "hi")
    sent = mock_llm.requests[-1]
    assert sent["_api"] == "anthropic"
    blocks = [b for m in sent["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["Read_93"]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["Read_93"]


def test_a_system_message_goes_out_as_an_event(claude: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(claude)
    mock_llm.script(Reply.text("Noted."))
    claude.agents.messages.create(agent.id, messages=[{"role": "system", "content": "The user left."}])  # type: ignore[list-item]
    last = mock_llm.requests[-1]["messages"][-1]
    event = {"type": "text", "text": "<event>SYSTEM ALERT: The user left.</event>", "cache_control": EPHEMERAL}
    assert last == {"role": "user", "content": [event]}
    # Text that already holds an <event> element is not wrapped in another, as Letta leaves it.
    mock_llm.script(Reply.text("Noted again."))
    tagged = "<event>The user is back.</event>"
    claude.agents.messages.create(agent.id, messages=[{"role": "system", "content": tagged}])  # type: ignore[list-item]
    last = mock_llm.requests[-1]["messages"][-1]
    assert last["content"][-1]["text"] == f"SYSTEM ALERT: {tagged}"


class TestUsageAndErrors:
    def test_usage_on_run_and_steps_with_cache_tokens(
        self, claude: Letta, chttp: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(claude)
        mock_llm.script(Reply.text("first"), Reply.text("second"))
        first = say(claude, agent.id, "one")
        second = say(claude, agent.id, "two")
        cached: set[str] = set()
        reported = [
            usage_for(body, reply, cached)
            for body, reply in zip(mock_llm.requests, [Reply.text("first"), Reply.text("second")], strict=True)
        ]
        for response, usage in zip((first, second), reported, strict=True):
            prompt = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
            assert response.usage.prompt_tokens == prompt
            assert response.usage.completion_tokens == usage["output_tokens"]
            assert response.usage.total_tokens == prompt + usage["output_tokens"]
        # The first turn wrote the system prompt to the cache; the second read it back.
        assert first.usage.cache_write_tokens == reported[0]["cache_creation_input_tokens"] > 0
        assert second.usage.cached_input_tokens == reported[1]["cache_read_input_tokens"] > 0
        run_id = second.messages[-1].run_id
        [step] = chttp.get(f"/v1/runs/{run_id}/steps").json()
        assert step["prompt_tokens"] == second.usage.prompt_tokens
        assert step["cached_input_tokens"] == second.usage.cached_input_tokens
        assert chttp.get(f"/v1/runs/{run_id}/usage").json()["prompt_tokens"] == second.usage.prompt_tokens
        # The cache write of the first turn is kept on its step and in its run's usage.
        first_run = first.messages[-1].run_id
        [written] = chttp.get(f"/v1/runs/{first_run}/steps").json()
        assert written["cache_write_tokens"] == first.usage.cache_write_tokens
        assert written["prompt_tokens_details"]["cache_creation_tokens"] == first.usage.cache_write_tokens
        run_usage = chttp.get(f"/v1/runs/{first_run}/usage").json()
        assert run_usage["prompt_tokens_details"]["cache_creation_tokens"] == first.usage.cache_write_tokens

    def test_rate_limit_and_overload_map_to_llm_errors(
        self, claude: Letta, chttp: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(claude)
        body = {"messages": [{"role": "user", "content": "hi"}]}
        mock_llm.script(Reply.error(429, times=10))
        limited = chttp.post(f"/v1/agents/{agent.id}/messages", json=body)
        assert limited.status_code == 429 and limited.json()["error"]["type"] == "llm_rate_limit"
        mock_llm.reset()
        mock_llm.script(Reply.error(529, times=10))
        overloaded = chttp.post(f"/v1/agents/{agent.id}/messages", json=body)
        assert overloaded.status_code == 503 and "overloaded" in overloaded.json()["detail"].lower()
        mock_llm.reset()
        mock_llm.script(Reply.text("back"))
        assert say(claude, agent.id, "again").messages[-1].content == "back"

    def test_raw_llm_config_with_anthropic_endpoint_type(self, claude: Letta, mock_llm: MockLLM) -> None:
        config = {"model": "claude-3-5-haiku-20241022", "model_endpoint_type": "anthropic", "context_window": 200000}
        agent = claude.agents.create(llm_config=config, embedding=EMBEDDING, memory_blocks=BLOCKS)  # type: ignore[arg-type]
        mock_llm.script(Reply.text("raw ok"))
        assert say(claude, agent.id, "hi").messages[-1].content == "raw ok"
        assert mock_llm.requests[-1]["_api"] == "anthropic" and mock_llm.authorizations[-1] == KEY
        assert "thinking" not in mock_llm.requests[-1] and "_beta" not in mock_llm.requests[-1]  # not a reasoner


class TestPreviewAndByok:
    def test_preview_shows_the_anthropic_body(self, claude: Letta, chttp: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(claude)
        body = {"messages": [{"role": "user", "content": "peek"}]}
        preview = chttp.post(f"/v1/agents/{agent.id}/messages/preview-raw-payload", json=body).json()
        assert preview["model"] == "claude-sonnet-4-5-20250929"
        assert preview["system"][-1]["cache_control"] == EPHEMERAL
        assert preview["thinking"]["type"] == "enabled"
        # The conversation's last block is marked for caching, as Letta marks it.
        assert preview["messages"][-1]["content"] == [{"type": "text", "text": "peek", "cache_control": EPHEMERAL}]
        assert mock_llm.requests == []

    def test_byok_anthropic_provider_lists_and_runs_with_its_key(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        mock_llm.reset()
        created = http.post(
            "/v1/providers/",
            json={
                "name": "my-claude",
                "provider_type": "anthropic",
                "api_key": "sk-byok",
                "base_url": mock_llm.base_url,
            },
        )
        assert created.status_code == 200, created.text
        check = {"provider_type": "anthropic", "api_key": "sk-byok", "base_url": mock_llm.base_url}
        assert http.post("/v1/providers/check", json=check).status_code == 200
        assert mock_llm.authorizations[-1] == "sk-byok"
        handles = {m.handle for m in client.models.list()}
        assert "my-claude/claude-haiku-4-5-20251001" in handles
        assert mock_llm.authorizations[-1] == "sk-byok"  # the listing used the provider's own key
        agent = client.agents.create(
            model="my-claude/claude-haiku-4-5-20251001", embedding=EMBEDDING, memory_blocks=BLOCKS
        )  # type: ignore[arg-type]
        mock_llm.script(Reply.text("byok ok"))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        assert response.messages[-1].content == "byok ok"
        assert mock_llm.requests[-1]["_api"] == "anthropic" and mock_llm.authorizations[-1] == "sk-byok"
