"""Archival memory, after Letta's `tests/managers/test_passage_manager.py` and `test_archive_manager.py`: what a
letta-client user is answered, and what the model reads back from the archival and conversation search tools."""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_archival_api import EMBEDDING, make_agent
from tests.mock_llm import MockLLM, Reply

ARCHIVAL_TOOLS = ["archival_memory_insert", "archival_memory_search"]


def tool_returns(response: Any) -> list[Any]:
    return [m for m in response.messages if m.message_type == "tool_return_message"]


def model_reads(mock_llm: MockLLM) -> list[dict[str, Any]]:
    """The tool results the model was sent in the last request (each a packed JSON object)."""
    return [json.loads(m["content"]) for m in mock_llm.requests[-1]["messages"] if m["role"] == "tool"]


class TestTags:
    def test_long_blank_special_and_repeated_tags_are_stored_as_letta_stores_them(
        self, client: Letta, http: httpx.Client
    ) -> None:
        agent = make_agent(client)
        special = ["tag-with-dash", "tag.with.dots", "tag/with/slash", "tag with spaces", "数字标签", ""]
        cases = [(["a" * 500, "normal_tag"], ["a" * 500, "normal_tag"]), (special, special)]
        cases.append((["tag1", "tag2", "tag1", "tag3", "tag2"], ["tag1", "tag2", "tag3"]))
        cases.append((["Tag", "tag", "TAG"], ["Tag", "tag", "TAG"]))
        for given, stored in cases:
            response = http.post(f"/v1/agents/{agent.id}/archival-memory", json={"text": "tagged", "tags": given})
            assert response.status_code == 200, response.text
            assert response.json()[0]["tags"] == stored
        found = client.agents.passages.search(agent.id, query="tagged", tags=["a" * 500])
        assert [r.tags for r in found.results] == [["a" * 500, "normal_tag"]]

    def test_the_model_inserts_a_long_tag_and_reads_a_plain_error_past_the_limit(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client, tools=ARCHIVAL_TOOLS)
        mock_llm.script(
            Reply.tool_call("archival_memory_insert", {"content": "kept", "tags": ["x" * 500]}),
            Reply.tool_call("archival_memory_insert", {"content": "refused", "tags": ["y" * 501]}),
            Reply.text("done"),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "remember"}])
        kept, refused = tool_returns(response)
        assert kept.status == "success"
        assert refused.status == "error"
        problem = "INVALID_ARGUMENT: tags: at most 64 tags of at most 500 characters"
        assert refused.tool_return == problem
        assert model_reads(mock_llm)[-1]["message"] == problem
        assert [p.tags for p in client.agents.passages.list(agent.id)] == [["x" * 500]]


class TestDelete:
    def test_an_agent_deletes_only_its_own_passages(self, client: Letta, http: httpx.Client) -> None:
        # memlet's side of a README compatibility note: Letta deleted any passage of the organization through any
        # agent's route (another agent's memory, a file's passage), ignoring the agent in the path.
        mine, theirs = make_agent(client, "mine"), make_agent(client, "theirs")
        (kept,) = client.agents.passages.create(theirs.id, text="their memory")
        missing = {"detail": f"Passage with id '{kept.id}' not found"}
        response = http.delete(f"/v1/agents/{mine.id}/archival-memory/{kept.id}")
        assert (response.status_code, response.json()) == (404, missing)
        assert [p.id for p in client.agents.passages.list(theirs.id)] == [kept.id]
        response = http.delete(f"/v1/agents/{theirs.id}/archival-memory/{kept.id}")
        deleted = {"message": f"Memory id={kept.id} successfully deleted"}
        assert (response.status_code, response.json()) == (200, deleted)


class TestInsertLimit:
    def test_the_rest_insert_refuses_over_8192_tokens_and_the_tool_does_not(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client, tools=ARCHIVAL_TOOLS)
        long_text = " ".join(["apple"] * 9000)  # 9,000 tokens
        response = http.post(f"/v1/agents/{agent.id}/archival-memory", json={"text": long_text})
        assert response.status_code == 400
        assert response.json() == {
            "detail": "INVALID_ARGUMENT: Archival memory content exceeds token limit of 8192 tokens (found 9000 tokens)"
        }
        fits = http.post(f"/v1/agents/{agent.id}/archival-memory", json={"text": " ".join(["apple"] * 8192)})
        assert fits.status_code == 200, fits.text
        mock_llm.script(Reply.tool_call("archival_memory_insert", {"content": long_text}), Reply.text("done"))
        (stored,) = tool_returns(client.agents.messages.create(agent.id, input="keep it"))
        assert stored.status == "success"
        assert len(client.agents.passages.list(agent.id)) == 2


class TestSearchToolDates:
    def test_a_date_that_is_not_iso_names_the_argument_as_letta_does(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client, tools=[*ARCHIVAL_TOOLS, "conversation_search"])
        calls = [
            ("archival_memory_search", {"query": "x", "start_datetime": "yesterday"}),
            ("archival_memory_search", {"query": "x", "end_datetime": "2024-13-45"}),
            ("conversation_search", {"query": "x", "start_date": "last week"}),
            ("conversation_search", {"query": "x", "end_date": "soon"}),
        ]
        mock_llm.script(*(Reply.tool_call(name, args) for name, args in calls), Reply.text("done"))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "look"}])
        hint = "Use ISO 8601 format (YYYY-MM-DD or YYYY-MM-DDTHH:MM)"
        expected = [
            f"Invalid start_datetime format: yesterday. {hint}",
            f"Invalid end_datetime format: 2024-13-45. {hint}",
            f"Invalid start_date format: last week. {hint}",
            f"Invalid end_date format: soon. {hint}",
        ]
        assert [(r.status, r.tool_return) for r in tool_returns(response)] == [("error", e) for e in expected]
        assert [r["message"] for r in model_reads(mock_llm)] == expected


class TestListing:
    def test_newest_first_cursors_walk_to_older_passages(self, client: Letta, http: httpx.Client) -> None:
        # Pins the README note on newest-first cursors: Letta read `after` / `before` as newer / older than the
        # cursor whatever the order, so `ascending=false` with `after=<last id>` gave the newest page again.
        agent = make_agent(client)
        ids = [client.agents.passages.create(agent.id, text=f"note {i}")[0].id for i in range(5)]

        def page(**params: Any) -> list[str]:
            response = http.get(f"/v1/agents/{agent.id}/archival-memory", params={"ascending": "false", **params})
            assert response.status_code == 200, response.text
            return [p["id"] for p in response.json()]

        newest = ids[::-1]
        first = page(limit=2)
        assert first == newest[:2]
        assert page(limit=2, after=first[-1]) == newest[2:4]
        assert page(after=newest[0], before=newest[3]) == newest[1:3]
        # Oldest first (the default), the cursors mean what they mean in Letta.
        assert [p.id for p in client.agents.passages.list(agent.id, after=ids[0], before=ids[3])] == ids[1:3]


class TestEmptyTags:
    """Letta stores a passage's tags as given: ``[]`` reads ``[]``, no tags read ``null`` (each route and the tool)."""

    def test_routes_keep_an_empty_list_apart_from_none(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client)
        url = f"/v1/agents/{agent.id}/archival-memory"
        assert http.post(url, json={"text": "empty", "tags": []}).json()[0]["tags"] == []
        assert http.post(url, json={"text": "none"}).json()[0]["tags"] is None
        assert http.post(url, json={"text": "null", "tags": None}).json()[0]["tags"] is None
        listed = {p["text"]: p["tags"] for p in http.get(url).json()}
        assert listed == {"empty": [], "none": None, "null": None}
        found = http.get(f"{url}/search", params={"query": "empty"}).json()["results"]
        assert {r["content"]: r["tags"] for r in found} == {"empty": [], "none": [], "null": []}  # as Letta's `or []`
        archive = client.archives.create(name="tagless", embedding=EMBEDDING)
        one = http.post(f"/v1/archives/{archive.id}/passages", json={"text": "a", "tags": []}).json()
        bare = http.post(f"/v1/archives/{archive.id}/passages", json={"text": "b"}).json()
        assert (one["tags"], bare["tags"]) == ([], None)
        batch = http.post(
            f"/v1/archives/{archive.id}/passages/batch",
            json={"passages": [{"text": "c", "tags": []}, {"text": "d"}]},
        ).json()
        assert [p["tags"] for p in batch] == [[], None]
        hits = http.post("/v1/passages/search", json={"query": "a", "archive_id": archive.id}).json()
        assert {h["passage"]["text"]: h["passage"]["tags"] for h in hits} == {"a": [], "b": None, "c": [], "d": None}

    def test_the_tool_stores_what_the_model_gave(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        agent = make_agent(client, tools=ARCHIVAL_TOOLS)
        mock_llm.script(
            Reply.tool_call("archival_memory_insert", {"content": "empty", "tags": []}),
            Reply.tool_call("archival_memory_insert", {"content": "none"}),
            Reply.text("done"),
        )
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "remember"}])
        listed = http.get(f"/v1/agents/{agent.id}/archival-memory").json()
        assert {p["text"]: p["tags"] for p in listed} == {"empty": [], "none": None}
