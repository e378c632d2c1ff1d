"""What Letta 0.16.8's own conversation tests (`integration_test_conversations_sdk.py`) rely on, where memlet
answered differently: the text of a cancel with nothing running."""

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import make_agent
from tests.mock_llm import MockLLM


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
