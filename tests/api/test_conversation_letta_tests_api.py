"""What Letta 0.16.8's own conversation tests (`integration_test_conversations_sdk.py`) rely on, where memlet
answered differently: the texts of a cancel with nothing running and of a compact with nothing to summarize."""

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import make_agent, send
from tests.mock_llm import MockLLM, Reply

NOT_REDUCED = (
    "Summarization failed to reduce the number of messages. You may not have enough messages to compact or need "
    "to use a different CompactionSettings (e.g. using `all` mode)."
)


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def test_cancel_with_nothing_running_names_the_path_id(client: Letta, http: httpx.Client) -> None:
    """Letta's `NoActiveRunsToCancelError(conversation_id=conversation_id)` names the path's id: `default` stays
    `default` (memlet named the agent), an `agent-…` path its agent."""
    agent = make_agent(client)
    default = http.post("/v1/conversations/default/cancel", params={"agent_id": agent.id})
    assert (default.status_code, default.json()) == (
        409,
        {"detail": "CONFLICT: No active runs to cancel for conversation default"},
    )
    alias = http.post(f"/v1/conversations/{agent.id}/cancel")
    assert (alias.status_code, alias.json()) == (
        409,
        {"detail": f"CONFLICT: No active runs to cancel for conversation {agent.id}"},
    )


def test_compact_with_nothing_to_summarize_is_lettas_not_reduced(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    """Letta's compact route has no early return: a window of only the system message (and summaries) gets a
    summary that cannot shrink it, so the answer is its 400 "failed to reduce", for a conversation and for the
    default thread alike (memlet: "No in-context messages found", and a 200 for the default thread). The agent's
    own `/summarize` keeps Letta's early return there."""
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    for path, body in (
        (conv.id, {}),
        ("default", {"agent_id": agent.id}),
        (agent.id, {}),
    ):
        fresh = http.post(f"/v1/conversations/{path}/compact", json=body)
        assert (fresh.status_code, fresh.json()) == (400, {"detail": NOT_REDUCED}), path

    mock_llm.script(Reply.text("a reply"))
    send(http, conv.id, "something to summarize")
    mock_llm.script(Reply.text("SUMMARY: one exchange"))
    everything = http.post(f"/v1/conversations/{conv.id}/compact", json={"compaction_settings": {"mode": "all"}})
    assert everything.status_code == 200, everything.text
    assert everything.json()["num_messages_after"] == 2  # the system message and the summary
    again = http.post(f"/v1/conversations/{conv.id}/compact", json={})
    assert (again.status_code, again.json()) == (400, {"detail": NOT_REDUCED})

    summarized = http.post(f"/v1/agents/{agent.id}/summarize", json={})
    assert summarized.status_code == 200, summarized.text
    assert summarized.json()["num_messages_before"] == summarized.json()["num_messages_after"] == 1


def test_every_conversation_response_lists_its_window(client: Letta, http: httpx.Client) -> None:
    """A deliberate difference (README): Letta answered `in_context_message_ids: []` everywhere but retrieve."""
    agent = make_agent(client)
    conv = client.conversations.create(agent_id=agent.id)
    [system_id] = conv.in_context_message_ids
    assert [c.in_context_message_ids for c in client.conversations.list(agent_id=agent.id)] == [[system_id]]
    assert client.conversations.update(conv.id, summary="renamed").in_context_message_ids == [system_id]
    forked = http.post(f"/v1/conversations/{conv.id}/fork").json()
    assert len(forked["in_context_message_ids"]) == 1 and forked["in_context_message_ids"] != [system_id]
    assert client.conversations.retrieve(forked["id"]).in_context_message_ids == forked["in_context_message_ids"]
