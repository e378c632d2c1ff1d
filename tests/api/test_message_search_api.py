"""Message search: ``POST /v1/messages/search`` (letta-client ``messages.search``) and
``POST /v1/agents/messages/search`` (no SDK method; raw HTTP). Without message embeddings (the default) every
search_mode is the text ranking: full-text matches best first, then substring-only matches."""

from typing import Any

import httpx
import pytest
from letta_client import Letta, UnprocessableEntityError

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(
        model=MODEL, embedding=EMBEDDING, memory_blocks=[{"label": "human", "value": "Likes pancakes."}], **kwargs
    )


def chat(client: Letta, mock_llm: MockLLM, agent_id: str, text: str, *replies: Reply) -> None:
    mock_llm.script(*replies)
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": text}])


@pytest.fixture
def two_agents(client: Letta, mock_llm: MockLLM) -> tuple[str, str]:
    first = make_agent(client).id
    second = make_agent(client).id
    chat(client, mock_llm, first, "I love pancakes with syrup", Reply.text("Pancakes are great!"))
    chat(client, mock_llm, first, "What about waffles?", Reply.text("Waffles too."))
    chat(client, mock_llm, second, "pancakes for dinner?", Reply.text("Sure."))
    return first, second


class TestSearchAllMessages:
    def test_finds_user_and_assistant_views_across_agents(self, client: Letta, two_agents: tuple[str, str]) -> None:
        first, second = two_agents
        results = client.messages.search(query="PANCAKES")
        got = [(r.message_type, r.agent_id, r.content) for r in results]  # type: ignore[union-attr]
        # Newest first; the system prompt (which mentions pancakes in memory) is not searchable.
        assert got == [
            ("user_message", second, "pancakes for dinner?"),
            ("assistant_message", first, "Pancakes are great!"),
            ("user_message", first, "I love pancakes with syrup"),
        ]
        assert all(r.message_id.startswith("message-") and r.created_at for r in results)

    def test_filters_and_limit(self, client: Letta, two_agents: tuple[str, str]) -> None:
        first, _ = two_agents
        only_first = client.messages.search(query="pancakes", agent_id=first, search_mode="vector")
        assert {r.agent_id for r in only_first} == {first} and len(only_first) == 2
        assert len(client.messages.search(query="pancakes", limit=1)) == 1
        assert client.messages.search(query="pancakes", start_date="2999-01-01T00:00:00Z") == []
        assert client.messages.search(query="nothing-like-this") == []

    def test_v2_agent_text_shows_as_assistant(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta renders every search hit with text_is_assistant_message=True, so a V2 agent's thoughts come
        # back as an assistant_message too, followed by its send_message reply.
        agent = make_agent(client, agent_type="memgpt_v2_agent")
        call = Reply.tool_call("send_message", {"thinking": "Mention crepes.", "message": "Crepes it is."})
        chat(client, mock_llm, agent.id, "hungry", call)
        results = client.messages.search(query="crepes")
        assert [(r.message_type, r.content) for r in results] == [  # type: ignore[union-attr]
            ("assistant_message", "Mention crepes."),
            ("assistant_message", "Crepes it is."),
        ]
        assert results[0].message_id == results[1].message_id

    def test_query_required(self, client: Letta, http: httpx.Client) -> None:
        assert http.post("/v1/messages/search", json={}).status_code == 422
        with pytest.raises(UnprocessableEntityError):
            client.messages.search(query="x", limit=101)


class TestSearchMessages:
    def test_raw_messages_with_ranks(self, http: httpx.Client, two_agents: tuple[str, str]) -> None:
        first, _ = two_agents
        response = http.post("/v1/agents/messages/search", json={"query": "pancakes", "agent_id": first})
        assert response.status_code == 200, response.text
        results = response.json()
        assert [r["message"]["role"] for r in results] == ["assistant", "user"]
        assert [r["fts_rank"] for r in results] == [1, 2]
        assert results[0]["vector_rank"] is None
        assert results[0]["rrf_score"] > results[1]["rrf_score"] > 0
        assert results[0]["embedded_text"] == '{"content": "Pancakes are great!"}'
        assert results[1]["message"]["agent_id"] == first
        assert results[1]["message"]["content"][0]["text"] == "I love pancakes with syrup"

    def test_roles_and_no_query(self, http: httpx.Client, two_agents: tuple[str, str]) -> None:
        users = http.post("/v1/agents/messages/search", json={"query": "pancakes", "roles": ["user"]}).json()
        assert [r["message"]["role"] for r in users] == ["user", "user"]
        assert http.post("/v1/agents/messages/search", json={"roles": ["system"]}).json() == []
        everything = http.post("/v1/agents/messages/search", json={"limit": 100}).json()
        assert {r["message"]["role"] for r in everything} == {"user", "assistant"}
        assert len(everything) == 6

    def test_a_send_embeds_nothing_by_default(
        self, http: httpx.Client, mock_llm: MockLLM, two_agents: tuple[str, str]
    ) -> None:
        # Message embeddings are off unless `embed_messages` is set: no embedding call on the send path, no vector rank.
        assert mock_llm.embedding_requests == []
        results = http.post("/v1/agents/messages/search", json={"query": "pancakes", "search_mode": "hybrid"}).json()
        assert results and all(r["vector_rank"] is None for r in results)

    def test_bad_role_422(self, http: httpx.Client) -> None:
        assert http.post("/v1/agents/messages/search", json={"roles": ["boss"]}).status_code == 422


class TestTextRanking:
    @pytest.fixture
    def agent_id(self, client: Letta, mock_llm: MockLLM) -> str:
        agent = make_agent(client).id
        chat(client, mock_llm, agent, "The garden needs water and the garden needs sun", Reply.text("Noted."))
        chat(client, mock_llm, agent, "My sister has a garden", Reply.text("Nice."))
        chat(client, mock_llm, agent, "Gardening gloves are in the shed", Reply.text("Okay."))
        chat(client, mock_llm, agent, "Bring the watering can", Reply.text("Sure thing."))
        return agent

    def test_more_matching_words_rank_first_then_prefixes(self, client: Letta, agent_id: str) -> None:
        results = client.messages.search(query="garden water", agent_id=agent_id)
        # Both words twice beats one word; "watering"/"Gardening" match as word prefixes.
        assert [r.content for r in results] == [  # type: ignore[union-attr]
            "The garden needs water and the garden needs sun",
            "Bring the watering can",
            "Gardening gloves are in the shed",
            "My sister has a garden",
        ]

    def test_substring_matches_fill_after_full_text(self, http: httpx.Client, agent_id: str) -> None:
        body = {"query": "ardening", "agent_id": agent_id}
        results = http.post("/v1/agents/messages/search", json=body).json()
        assert [r["embedded_text"] for r in results] == ['{"content": "Gardening gloves are in the shed"}']
        assert (results[0]["fts_rank"], results[0]["vector_rank"]) == (1, None)
        results = http.post("/v1/agents/messages/search", json={"query": "garden", "agent_id": agent_id}).json()
        assert [r["fts_rank"] for r in results] == [1, 2, 3]
        assert [r["rrf_score"] for r in results] == pytest.approx([1 / 61, 1 / 62, 1 / 63])

    def test_conversation_search_tool_ranks_the_same_way(self, client: Letta, agent_id: str) -> None:
        found = client.agents.tools.run(
            agent_id=agent_id, tool_name="conversation_search", args={"query": "garden water", "limit": 2}
        )
        contents = [r["content"] for r in found.func_return["results"]]  # type: ignore[index]
        assert contents == ["The garden needs water and the garden needs sun", "Bring the watering can"]
