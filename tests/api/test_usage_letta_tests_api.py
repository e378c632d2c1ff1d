"""What Letta 0.16.8's test_usage_parsing.py and test_streaming_chunk_usage.py pin, seen in a send's `usage`: the
provider's counts as it reported them. A stream that repeats its running totals on every chunk (vLLM's continuous
usage) counts once, at its last totals, not summed; OpenAI's cached prompt tokens and reasoning tokens are read
from its usage details. (Regression tests: memlet already did this.)
"""

import json
from typing import Any

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def chunk(usage: dict[str, Any] | None, content: str | None = None, finish: str | None = None) -> str:
    choices = (
        []
        if content is None and finish is None
        else [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]
    )
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    return f"data: {json.dumps({**body, 'choices': choices, 'usage': usage})}\n\n"


def totals(prompt: int, completion: int, **details: Any) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion, **details}


@pytest.mark.parametrize("streaming", [False, True])
def test_running_totals_on_every_chunk_count_once(client: Letta, mock_llm: MockLLM, streaming: bool) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    pieces = [chunk(totals(20, n), content=str(n)) for n in (1, 2, 3)]
    mock_llm.script(Reply.raw(*pieces, chunk(totals(20, 3), content="", finish="stop"), "data: [DONE]\n\n"))
    if streaming:
        events = list(client.agents.messages.stream(agent.id, input="Count to three."))
        usage: Any = next(e for e in events if e.message_type == "usage_statistics")
    else:
        usage = client.agents.messages.create(agent.id, input="Count to three.").usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (20, 3, 23)
    assert usage.step_count == 1


def test_cached_and_reasoning_tokens_are_read_from_the_details(client: Letta, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    details = {"prompt_tokens_details": {"cached_tokens": 12}, "completion_tokens_details": {"reasoning_tokens": 7}}
    final = chunk(totals(40, 9, **details))
    mock_llm.script(Reply.raw(chunk(None, content="Hi.", finish="stop"), final, "data: [DONE]\n\n"))
    usage = client.agents.messages.create(agent.id, input="hello").usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (40, 9)  # cached tokens are part of the prompt
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (12, 7)


def _usage_chunk(events: list[Any]) -> Any:
    return next(e for e in events if e.message_type == "usage_statistics")


DETAILS = ("cached_input_tokens", "cache_write_tokens", "reasoning_tokens")


def test_a_token_stream_shows_null_for_details_the_provider_left_out(client: Letta, mock_llm: MockLLM) -> None:
    """Letta's V3 token stream reads the details as reported (null when not); its other sends count them as 0."""
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    bare = Reply.raw(chunk(None, content="Hi.", finish="stop"), chunk(totals(30, 2)), "data: [DONE]\n\n")
    mock_llm.script(bare, bare, bare)
    streamed = _usage_chunk(list(client.agents.messages.stream(agent.id, input="hi", stream_tokens=True)))
    assert [getattr(streamed, d) for d in DETAILS] == [None, None, None]
    assert (streamed.prompt_tokens, streamed.completion_tokens) == (30, 2)
    stepped = _usage_chunk(list(client.agents.messages.stream(agent.id, input="hi")))
    assert [getattr(stepped, d) for d in DETAILS] == [0, 0, 0]
    blocking = client.agents.messages.create(agent.id, input="hi").usage
    assert [getattr(blocking, d) for d in DETAILS] == [0, 0, 0]


def test_a_token_stream_shows_reported_zeros_and_counts(client: Letta, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    details = {"prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 4}}
    final = chunk(totals(40, 9, **details))
    mock_llm.script(Reply.raw(chunk(None, content="Hi.", finish="stop"), final, "data: [DONE]\n\n"))
    usage = _usage_chunk(list(client.agents.messages.stream(agent.id, input="hi", stream_tokens=True)))
    assert [getattr(usage, d) for d in DETAILS] == [0, None, 4]


def test_a_v2_agents_token_stream_never_reads_the_details(client: Letta, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, agent_type="memgpt_v2_agent")  # type: ignore[arg-type]
    mock_llm.script(Reply.tool_call("send_message", {"message": "Hi."}))
    usage = _usage_chunk(list(client.agents.messages.stream(agent.id, input="hi", stream_tokens=True)))
    assert [getattr(usage, d) for d in DETAILS] == [None, None, None]  # the mock reported both OpenAI details
    assert usage.prompt_tokens > 0


def test_lm_studio_without_stream_usage_counts_the_prompt(client: Letta, mock_llm: MockLLM) -> None:
    """Letta counts the prompt it sent to an lmstudio_openai model whose stream reported no prompt tokens."""
    config = client.agents.create(model=MODEL, embedding=EMBEDDING).llm_config.model_dump()  # type: ignore[arg-type]
    lm = client.agents.create(
        llm_config={**config, "provider_name": "lmstudio_openai"},  # type: ignore[arg-type]
        embedding=EMBEDDING,
    )
    bare = Reply.raw(chunk(None, content="Hi.", finish="stop"), "data: [DONE]\n\n")
    mock_llm.script(bare, bare)
    usage = _usage_chunk(list(client.agents.messages.stream(lm.id, input="hi", stream_tokens=True)))
    assert usage.prompt_tokens > 500  # the system prompt and the tools' definitions
    assert (usage.completion_tokens, usage.total_tokens) == (0, usage.prompt_tokens)
    plain = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    other = _usage_chunk(list(client.agents.messages.stream(plain.id, input="hi", stream_tokens=True)))
    assert other.prompt_tokens == 0  # any other provider: what it reported
