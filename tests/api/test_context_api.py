"""Context window report, system-prompt recompilation and manual summarization."""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_security_secrets import sql
from tests.mock_llm import MockLLM, Reply
from tests.shared_paths import OPENAPI

BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", memory_blocks=BLOCKS, **kwargs
    )  # type: ignore[arg-type]


def send(http: httpx.Client, agent_id: str, text: str) -> None:
    response = http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})
    assert response.status_code == 200, response.text


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


class TestContextWindow:
    def test_sections_and_counts(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("hi Bob"))
        send(http, agent.id, "hello")
        report = http.get(f"/v1/agents/{agent.id}/context").json()
        schema = json.loads(OPENAPI.read_text())["components"]["schemas"]["ContextWindowOverview"]
        assert set(report) == set(schema["properties"])
        assert report["num_messages"] == 3 and report["num_recall_memory"] == 3
        assert "The human's name is Bob." in report["core_memory"] and report["num_tokens_core_memory"] > 0
        assert report["external_memory_summary"].startswith("<memory_metadata>")
        assert report["num_tokens_system"] > 0 and "<memory_blocks>" not in report["system_prompt"]
        names = {f["function"]["name"] for f in report["functions_definitions"]}
        assert names == {"conversation_search", "memory_insert", "memory_replace"}
        assert report["num_tokens_messages"] > 0 and report["messages"][0]["role"] == "system"
        parts = [k for k in report if k.startswith("num_tokens_")]
        assert report["context_window_size_current"] == sum(report[k] for k in parts)
        assert report["context_window_size_max"] == 128000
        assert report["num_archival_memory"] == 0
        for text in ("Bob has a cat.", "Bob lives in Leeds."):
            client.agents.passages.create(agent.id, text=text)
        assert http.get(f"/v1/agents/{agent.id}/context").json()["num_archival_memory"] == 2

    def test_unknown_agent_404(self, http: httpx.Client) -> None:
        assert http.get("/v1/agents/agent-00000000-0000-4000-8000-000000000000/context").status_code == 404


class TestRecompile:
    def test_returns_prompt_with_current_memory(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        http.patch(f"/v1/agents/{agent.id}/core-memory/blocks/human", json={"value": "Bob moved to Oslo."})
        preview = http.post(f"/v1/agents/{agent.id}/recompile", params={"dry_run": True}).json()
        assert "Bob moved to Oslo." in preview
        prompt = http.post(f"/v1/agents/{agent.id}/recompile").json()
        assert "Bob moved to Oslo." in prompt
        system = [m for m in client.agents.messages.list(agent.id).items if m.message_type == "system_message"]
        assert system[0].content == prompt  # type: ignore[union-attr]

    def test_dry_run_does_not_save(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        before = http.get(f"/v1/agents/{agent.id}/messages").json()[0]["content"]
        http.post(f"/v1/agents/{agent.id}/recompile", params={"dry_run": True, "update_timestamp": True})
        assert http.get(f"/v1/agents/{agent.id}/messages").json()[0]["content"] == before


class TestSummarize:
    def test_summary_role_and_a_second_summarize_of_all(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM, pg_uri: str
    ) -> None:
        """Letta's manual compaction stores its summary with the `summary` role (listed as a user_message holding
        the packed alert); a second `all` finds only that summary left and answers 200 with its `message`."""
        agent = make_agent(client)
        for i in range(3):
            mock_llm.script(Reply.text(f"reply {i}"))
            send(http, agent.id, f"message {i}")
        conv = client.conversations.create(agent_id=agent.id)
        mock_llm.script(Reply.text("conversation reply"))
        http.post(f"/v1/conversations/{conv.id}/messages", json={"input": "hi", "streaming": False})
        mock_llm.script(Reply.text("We talked."), Reply.text("The conversation talked."))
        everything = {"compaction_settings": {"mode": "all"}}
        first = http.post(f"/v1/agents/{agent.id}/summarize", json=everything)
        assert first.status_code == 200, first.text
        compacted = http.post(f"/v1/conversations/{conv.id}/compact", json=everything)
        assert compacted.status_code == 200, compacted.text
        summary_ids = [
            client.agents.retrieve(agent.id).message_ids[1],  # type: ignore[index]
            client.conversations.retrieve(conv.id).in_context_message_ids[1],
        ]
        roles = sql(pg_uri, "SELECT role FROM messages WHERE id = ANY(:ids)", ids=summary_ids)
        assert [r.role for r in roles] == ["summary", "summary"]
        listed = [m for m in http.get(f"/v1/agents/{agent.id}/messages").json() if m["id"] == summary_ids[0]]
        assert [m["message_type"] for m in listed] == ["user_message"]
        packed = json.loads(listed[0]["content"])
        assert packed["type"] == "system_alert" and "We talked." in packed["message"]

        calls = len(mock_llm.requests)
        again = http.post(f"/v1/agents/{agent.id}/summarize", json=everything)
        assert again.status_code == 200, again.text
        assert again.json() == {"summary": packed["message"], "num_messages_before": 2, "num_messages_after": 2}
        assert len(mock_llm.requests) == calls  # nothing left to summarize: no summarizer call

    def test_nothing_to_summarize_keeps_everything(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        body = http.post(f"/v1/agents/{agent.id}/summarize").json()
        assert body == {"summary": "", "num_messages_before": 1, "num_messages_after": 1}

    def test_summarizes_the_oldest_messages(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        for i in range(6):
            mock_llm.script(Reply.text(f"reply {i} " + "padding " * 40))
            send(http, agent.id, f"message {i} " + "words " * 40)
        mock_llm.script(Reply.text("We talked about six things."))
        response = http.post(f"/v1/agents/{agent.id}/summarize")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["summary"] == "We talked about six things."
        assert body["num_messages_before"] == 13 and body["num_messages_after"] < 13
        state = client.agents.retrieve(agent.id)
        assert len(state.message_ids or []) == body["num_messages_after"]
        history = http.get(f"/v1/agents/{agent.id}/messages", params={"limit": 1000}).json()
        assert any("We talked about six things." in str(m.get("content")) for m in history)
