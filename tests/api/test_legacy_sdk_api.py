"""What programs on the pre-1.0 Python SDK (letta-client 0.1.x, Fern-generated: ``User-Agent: letta-client/0.1.324``)
need from memlet, as Letta 0.16.8 answers them: agent reads with every relationship, membership changes that answer
the updated agent, no ``streaming: true`` on the blocking route, and the message fields that SDK's types require
(``tool_call``, the top-level ``tool_return`` / ``status`` / ``tool_call_id``). The old SDK itself is not installed
here; ``tests/letta_sdk/run_legacy_sdk.sh`` runs it end to end."""

import httpx
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
# The headers letta-client 0.1.324 sends on every request.
OLD_SDK = {
    "User-Agent": "letta-client/0.1.324",
    "X-Fern-Language": "Python",
    "X-Fern-SDK-Name": "letta-client",
    "X-Fern-SDK-Version": "0.1.324",
}
NEW_SDK = {"User-Agent": "letta-client/1.12.1"}
# The fields letta-client 0.1.324's models declare required (the SDK builds them unvalidated: a missing one is an
# AttributeError, or None, in the program that reads it).
AGENT_REQUIRED = {"id", "name", "system", "agent_type", "llm_config", "embedding_config", "memory", "tools", "sources"}
MESSAGE_REQUIRED = {
    "assistant_message": {"id", "date", "content"},
    "tool_call_message": {"id", "date", "tool_call"},
    "tool_return_message": {"id", "date", "tool_return", "status", "tool_call_id"},
    "user_message": {"id", "date", "content"},
    "system_message": {"id", "date", "content"},
}

ROLL = 'def roll(sides: int) -> str:\n    """Roll a die.\n\n    Args:\n        sides: Its sides.\n    """\n    return "4"\n'


def old_agent(http: httpx.Client) -> dict:  # type: ignore[type-arg]
    body = {
        "name": "legacy",
        "memory_blocks": [{"label": "human", "value": "Sam"}],
        "model": MODEL,
        "embedding": EMBEDDING,
    }
    response = http.post("/v1/agents/", json=body, headers=OLD_SDK)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_agent_reads_carry_every_relationship_for_the_old_sdk(http: httpx.Client) -> None:
    agent = old_agent(http)
    for state in (
        http.get(f"/v1/agents/{agent['id']}", headers=OLD_SDK).json(),
        http.get("/v1/agents/", headers=OLD_SDK).json()[0],
    ):
        assert set(state) >= AGENT_REQUIRED
        assert [b["label"] for b in state["memory"]["blocks"]] == ["human"]
        assert state["tools"]
    # letta-client 1.x asks for relationships with include=; without it, none.
    state = http.get(f"/v1/agents/{agent['id']}", headers=NEW_SDK).json()
    assert state["tools"] == [] and state["memory"]["blocks"] == []


def test_membership_changes_answer_the_agent_to_the_old_sdk(http: httpx.Client) -> None:
    agent = old_agent(http)
    tool = http.post("/v1/tools/", json={"source_code": ROLL}, headers=OLD_SDK).json()
    folder = http.post("/v1/folders/", json={"name": "docs", "embedding": EMBEDDING}, headers=OLD_SDK).json()
    base = f"/v1/agents/{agent['id']}"
    attached = http.patch(f"{base}/tools/attach/{tool['id']}", headers=OLD_SDK).json()
    assert "roll" in {t["name"] for t in attached["tools"]}
    approval = http.patch(f"{base}/tools/approval/roll", json={"requires_approval": True}, headers=OLD_SDK).json()
    assert approval["id"] == agent["id"] and set(approval) >= AGENT_REQUIRED
    assert http.patch(f"{base}/folders/attach/{folder['id']}", headers=OLD_SDK).json()["id"] == agent["id"]
    assert http.patch(f"{base}/folders/detach/{folder['id']}", headers=OLD_SDK).json()["id"] == agent["id"]
    detached = http.patch(f"{base}/tools/detach/{tool['id']}", headers=OLD_SDK).json()
    assert "roll" not in {t["name"] for t in detached["tools"]}
    # letta-client 1.x gets null from the same routes.
    assert http.patch(f"{base}/tools/attach/{tool['id']}", headers=NEW_SDK).json() is None


def test_streaming_flag_on_the_blocking_route_is_refused_to_the_old_sdk(http: httpx.Client) -> None:
    agent = old_agent(http)
    body = {"messages": [{"role": "user", "content": "hi"}], "streaming": True}
    response = http.post(f"/v1/agents/{agent['id']}/messages", json=body, headers=OLD_SDK)
    assert response.status_code == 422
    assert "only supported for SDK v1.0+" in response.text


def test_messages_carry_the_fields_the_old_sdk_requires(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
    agent = old_agent(http)
    tool = http.post("/v1/tools/", json={"source_code": ROLL}, headers=OLD_SDK).json()
    http.patch(f"/v1/agents/{agent['id']}/tools/attach/{tool['id']}", headers=OLD_SDK)
    mock_llm.script(Reply.tool_call("roll", {"sides": 6}), Reply.text("You rolled a 4."))
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Roll a d6"}]}]}
    sent = http.post(f"/v1/agents/{agent['id']}/messages", json=body, headers=OLD_SDK, timeout=60).json()
    assert {"messages", "stop_reason", "usage"} <= set(sent)
    assert [m["message_type"] for m in sent["messages"]] == [
        "tool_call_message",
        "tool_return_message",
        "assistant_message",
    ]
    call, result, _ = sent["messages"]
    assert call["tool_call"]["name"] == "roll" and call["tool_call"]["tool_call_id"]
    assert (result["tool_return"], result["status"], result["tool_call_id"]) == (
        "4",
        "success",
        call["tool_call"]["tool_call_id"],
    )
    listed = http.get(f"/v1/agents/{agent['id']}/messages", headers=OLD_SDK).json()
    for message in [*sent["messages"], *listed]:
        assert MESSAGE_REQUIRED[message["message_type"]] <= set(message), message
