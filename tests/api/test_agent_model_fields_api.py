"""An agent's model fields on create and PATCH, through letta-client: `model_settings` alone, the deprecated
`max_tokens` / `max_reasoning_tokens` / `enable_reasoner` / `reasoning` / `parallel_tool_calls` / `response_format` /
`embedding_chunk_size`, and `message_buffer_autoclear` (a fresh window every turn).

Each test checks what the agent reports and what the model is sent on the next turn (the mock's records).
"""

from typing import Any

import pytest
from letta_client import BadRequestError, Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(model=MODEL, embedding=EMBEDDING, **kwargs)


def next_request(client: Letta, mock_llm: MockLLM, agent_id: str, reply: Reply | None = None) -> dict[str, Any]:
    """What the model is sent for one user message."""
    mock_llm.script(reply or Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    return mock_llm.requests[-1]


def test_a_patch_of_model_settings_alone_reaches_the_model(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    settings = {"provider_type": "openai", "temperature": 0.25, "max_output_tokens": 777}
    updated = client.agents.update(agent.id, model_settings=settings)  # type: ignore[arg-type]
    assert (updated.llm_config.temperature, updated.llm_config.max_tokens) == (0.25, 777)
    shown = updated.model_settings
    assert (shown["temperature"] if isinstance(shown, dict) else shown.temperature) == 0.25  # type: ignore[union-attr]
    sent = next_request(client, mock_llm, agent.id)
    assert (sent["temperature"], sent["max_completion_tokens"]) == (0.25, 777)
    # A later PATCH of other settings keeps the output limit it does not name.
    again = client.agents.update(agent.id, model_settings={"provider_type": "openai", "temperature": 0.5})  # type: ignore[arg-type]
    assert (again.llm_config.temperature, again.llm_config.max_tokens) == (0.5, 777)


def test_max_tokens_set_and_cleared_by_patch(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    assert client.agents.update(agent.id, max_tokens=555).llm_config.max_tokens == 555
    assert next_request(client, mock_llm, agent.id)["max_completion_tokens"] == 555
    # A new model keeps the agent's limit unless the settings name one.
    moved = client.agents.update(agent.id, model="openai/gpt-4o", model_settings={"provider_type": "openai"})  # type: ignore[arg-type]
    assert (moved.llm_config.model, moved.llm_config.max_tokens) == ("gpt-4o", 555)
    cleared = client.agents.update(agent.id, max_tokens=None)
    assert cleared.llm_config.max_tokens is None and cleared.llm_config.model == "gpt-4o"
    assert "max_completion_tokens" not in next_request(client, mock_llm, agent.id)


def test_embedding_chunk_size_on_create(client: Letta) -> None:
    assert make_agent(client).embedding_config.embedding_chunk_size == 300
    assert make_agent(client, embedding_chunk_size=512).embedding_config.embedding_chunk_size == 512


def test_deprecated_limits_on_create(client: Letta) -> None:
    agent = make_agent(client, max_tokens=900, max_reasoning_tokens=300)
    assert agent.llm_config.max_tokens == 900  # (a model that does not reason keeps no reasoning budget)
    with pytest.raises(BadRequestError) as refused:
        make_agent(client, max_tokens=100, max_reasoning_tokens=300)
    assert "Max reasoning tokens (300) must be less than max tokens (100)" in str(refused.value)


def test_parallel_tool_calls_on_create_and_patch(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, parallel_tool_calls=False)
    assert agent.llm_config.parallel_tool_calls is False
    assert next_request(client, mock_llm, agent.id)["parallel_tool_calls"] is False
    assert client.agents.update(agent.id, parallel_tool_calls=True).llm_config.parallel_tool_calls is True
    assert next_request(client, mock_llm, agent.id)["parallel_tool_calls"] is True


def test_a_patch_of_reasoning_turns_inner_thoughts_off(client: Letta, mock_llm: MockLLM) -> None:
    agent = make_agent(client, agent_type="memgpt_v2_agent")
    reply = Reply.tool_call("send_message", {"message": "ok"})
    assert agent.llm_config.put_inner_thoughts_in_kwargs is True
    thinking = {
        "thinking" in t["function"]["parameters"]["properties"]
        for t in next_request(client, mock_llm, agent.id, reply)["tools"]
    }
    assert thinking == {True}
    updated = client.agents.update(agent.id, reasoning=False)
    assert updated.llm_config.put_inner_thoughts_in_kwargs is False
    thinking = {
        "thinking" in t["function"]["parameters"]["properties"]
        for t in next_request(client, mock_llm, agent.id, reply)["tools"]
    }
    assert thinking == {False}


def test_a_patch_of_response_format_is_kept(client: Letta) -> None:
    agent = make_agent(client)
    updated = client.agents.update(agent.id, response_format={"type": "json_object"})  # type: ignore[arg-type]
    assert updated.response_format is not None and updated.response_format.type == "json_object"
    assert client.agents.retrieve(agent.id).response_format.type == "json_object"  # type: ignore[union-attr]


@pytest.mark.parametrize("in_conversation", [False, True])
def test_an_autoclear_agent_starts_each_turn_from_its_system_message(
    client: Letta, mock_llm: MockLLM, in_conversation: bool
) -> None:
    agent = make_agent(client, message_buffer_autoclear=True)
    conversation = client.conversations.create(agent_id=agent.id).id if in_conversation else None

    def turn(text: str) -> list[dict[str, Any]]:
        mock_llm.script(Reply.text(f"reply to {text}"))
        message = [{"role": "user", "content": text}]
        if conversation is None:
            client.agents.messages.create(agent.id, messages=message)  # type: ignore[arg-type]
        else:
            list(client.conversations.messages.create(conversation, messages=message))  # type: ignore[arg-type]
        return list(mock_llm.requests[-1]["messages"])

    turn("first")
    sent = turn("second")
    assert [m["role"] for m in sent] == ["system", "user"] and "second" in str(sent[-1]["content"])
    assert "first" not in str(sent)
    window = (
        client.agents.retrieve(agent.id).message_ids
        if conversation is None
        else client.conversations.retrieve(conversation).in_context_message_ids
    )
    assert window is not None and len(window) == 3  # the system message, then this turn's question and reply
    # Earlier messages stay in recall memory.
    history = (
        client.agents.messages.list(agent.id, limit=100, order="asc").items
        if conversation is None
        else client.conversations.messages.list(conversation, limit=100, order="asc").items
    )
    assert [m.content for m in history if m.message_type == "user_message"][-2:] == ["first", "second"]


def test_a_raw_llm_config_wins_over_the_handle_sent_with_it(client: Letta, mock_llm: MockLLM) -> None:
    """A client copying another agent's state sends `model` and `llm_config` together; Letta resolves the handle
    only without an `llm_config`, so the config's own settings (here its model and temperature) are kept."""
    raw = {
        "model": "gpt-4o",
        "model_endpoint_type": "openai",
        "model_endpoint": mock_llm.base_url,
        "context_window": 32000,
        "temperature": 0.2,
    }
    agent = client.agents.create(model=MODEL, llm_config=raw, embedding=EMBEDDING)  # type: ignore[arg-type]
    assert (agent.llm_config.model, agent.llm_config.context_window) == ("gpt-4o", 32000)
    sent = next_request(client, mock_llm, agent.id)
    assert (sent["model"], sent["temperature"]) == ("gpt-4o", 0.2)
    patched = client.agents.update(agent.id, model=MODEL, llm_config={**raw, "temperature": 0.6})  # type: ignore[arg-type]
    assert (patched.llm_config.model, patched.llm_config.temperature) == ("gpt-4o", 0.6)

    embedding = {"embedding_endpoint_type": "openai", "embedding_model": "text-embedding-3-large", "embedding_dim": 256}
    other = client.agents.create(model=MODEL, embedding=EMBEDDING, embedding_config=embedding)  # type: ignore[arg-type]
    assert (other.embedding_config.embedding_model, other.embedding_config.embedding_dim) == (
        "text-embedding-3-large",
        256,
    )
