"""Room for the completion: the prompt budget compaction keeps to, and the max_tokens a request asks for."""

import json

from memlet.loop.headroom import byte_bound, completion_limit, counting_margin, prompt_budget
from tests.token_budget import prompt_tokens

WORDS = "the river runs down the valley to the sea " * 40


def test_a_small_max_tokens_is_reserved_whole() -> None:
    assert prompt_budget(128000, 4096) == 128000 - 4096 - counting_margin(128000)


def test_a_max_tokens_larger_than_the_window_reserves_a_quarter() -> None:
    assert prompt_budget(4000, 16384) == 4000 - 1000 - counting_margin(4000)


def test_no_max_tokens_still_reserves_a_quarter() -> None:
    assert prompt_budget(8000, None) == 8000 - 2000 - counting_margin(8000)


def test_short_prompt_keeps_the_configured_limit() -> None:
    messages = [{"role": "user", "content": "hi"}]
    assert completion_limit(128000, 16384, messages, []) == 16384


def test_limit_is_lowered_to_what_the_prompt_leaves() -> None:
    messages = [{"role": "system", "content": WORDS}, {"role": "user", "content": WORDS}]
    limit = completion_limit(3000, 16384, messages, [])
    assert limit is not None and 0 < limit < 3000
    assert prompt_tokens({"messages": messages}) + limit <= 3000


def test_unbounded_stays_unbounded() -> None:
    assert completion_limit(3000, None, [{"role": "user", "content": WORDS}], []) is None


def test_byte_bound_counts_utf8_bytes_and_stays_above_the_exact_count() -> None:
    text = "naïve café — 東京の天気は晴れ 🌤 " * 30
    messages = [{"role": "system", "content": text}, {"role": "user", "content": text}]
    tools = [{"type": "function", "function": {"name": "f", "description": text, "parameters": {}}}]
    bound = byte_bound(messages, tools)
    exact_json = json.dumps([messages, tools], ensure_ascii=False, separators=(",", ":"))
    assert bound == len(exact_json.encode()) + 8
    assert bound >= prompt_tokens({"messages": messages, "tools": tools})
