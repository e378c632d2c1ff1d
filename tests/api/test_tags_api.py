"""`GET /v1/tags/` through the official letta-client: distinct agent and block tags, filters, cursors."""

from letta_client import Letta

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def seed(client: Letta) -> list[str]:
    """Agents and blocks sharing some tags; returns every distinct tag in code-point order."""
    client.agents.create(name="a1", model=MODEL, embedding=EMBEDDING, tags=["shared", "Zeta", "agent-one"])
    client.agents.create(name="a2", model=MODEL, embedding=EMBEDDING, tags=["shared", "agent-two"])
    client.blocks.create(label="notes", value="", tags=["block-only", "shared"])
    return sorted({"shared", "Zeta", "agent-one", "agent-two", "block-only"})


def walk(client: Letta, order: str) -> list[str]:
    seen: list[str] = []
    after: str | None = None
    while page := client.tags.list(order=order, limit=2, **({"after": after} if after else {})):  # type: ignore[arg-type]
        seen += page
        after = page[-1]
    return seen


class TestListTags:
    def test_distinct_tags_of_agents_and_blocks_alphabetical(self, client: Letta) -> None:
        expected = seed(client)
        assert client.tags.list() == expected
        assert client.tags.list(order="desc") == expected[::-1]

    def test_empty_when_nothing_is_tagged(self, client: Letta) -> None:
        assert client.tags.list() == []

    def test_query_text_and_name_filter_case_insensitively(self, client: Letta) -> None:
        seed(client)
        assert client.tags.list(query_text="AGENT") == ["agent-one", "agent-two"]
        assert client.tags.list(name="only") == ["block-only"]
        assert client.tags.list(query_text="%") == []

    def test_cursor_pagination_visits_each_once_in_both_orders(self, client: Letta) -> None:
        expected = seed(client)
        assert walk(client, "asc") == expected
        assert walk(client, "desc") == expected[::-1]

    def test_limit_and_before(self, client: Letta) -> None:
        expected = seed(client)
        assert client.tags.list(limit=2) == expected[:2]
        assert client.tags.list(before=expected[3], limit=2) == expected[1:3]
        assert client.tags.list(order="desc", before=expected[1], limit=2) == expected[3:1:-1]

    def test_deleted_agent_tags_disappear(self, client: Letta) -> None:
        agent = client.agents.create(name="gone", model=MODEL, embedding=EMBEDDING, tags=["ephemeral"])
        assert client.tags.list() == ["ephemeral"]
        client.agents.delete(agent.id)
        assert client.tags.list() == []
