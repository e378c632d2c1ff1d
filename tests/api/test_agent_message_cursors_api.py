"""`GET /v1/agents/{id}/messages` with `before` and an explicit order: `before` is the older side whatever the order,
as Letta's message manager compares it (`sequence_id <` the cursor's), and as memlet's thread lists already do."""

import httpx
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def distinct_ids(rows: list[dict[str, object]]) -> list[object]:
    return list(dict.fromkeys(r["id"] for r in rows))


def test_before_is_the_older_side_in_both_orders(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)  # type: ignore[arg-type]
    mock_llm.script(*[Reply.text(f"reply {n}") for n in range(3)])
    for n in range(3):
        client.agents.messages.create(agent.id, input=f"message {n}")
    url = f"/v1/agents/{agent.id}/messages"
    every = distinct_ids(http.get(url, params={"order": "asc", "limit": 100}).json())
    assert len(every) >= 7
    cursor = every[-3]
    newest_first = http.get(url, params={"order": "desc", "before": cursor, "limit": 2}).json()
    assert distinct_ids(newest_first) == [every[-4], every[-5]]
    oldest_first = http.get(url, params={"order": "asc", "before": cursor, "limit": 2}).json()
    assert distinct_ids(oldest_first) == [every[-5], every[-4]]  # the nearest (Letta: the oldest two), see README
    # `after` alone keeps following the order (the README's note), and with `before` it bounds the newer side.
    older = http.get(url, params={"order": "desc", "after": cursor, "limit": 2}).json()
    assert distinct_ids(older) == [every[-4], every[-5]]
    between = http.get(url, params={"order": "desc", "before": cursor, "after": every[-6], "limit": 10}).json()
    assert distinct_ids(between) == [every[-4], every[-5]]
