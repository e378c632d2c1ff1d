"""Provider failures through the HTTP API: a timeout ends the run with Letta's error shape and the agent stays usable;
and the classic memgpt_agent type ends its turn with send_message after editing core memory."""

import httpx
from letta_client import Letta

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply


def say(http: httpx.Client, agent_id: str, text: str) -> httpx.Response:
    return http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})


def test_llm_timeout_is_504_and_the_agent_stays_usable(settings: Settings, mock_llm: MockLLM, pg_uri: str) -> None:
    impatient = LiveServer(settings.model_copy(update={"llm_timeout_s": 0.5, "llm_max_retries": 1})).start()
    try:
        with httpx.Client(base_url=impatient.base_url, timeout=30) as http:
            mock_llm.reset()
            agent = http.post("/v1/agents/", json={"name": "slow", "model": "openai/gpt-4o-mini"}).json()
            mock_llm.script(Reply.delay(2, Reply.text("too late")), Reply.delay(2, Reply.text("too late")))
            failed = say(http, agent["id"], "hello?")
            assert failed.status_code == 504
            assert failed.json()["error"]["type"] == "llm_timeout"
            runs = http.get("/v1/runs/", params={"agent_id": agent["id"]}).json()
            assert [(r["status"], r["stop_reason"]) for r in runs] == [("failed", "llm_api_error")]

            mock_llm.script(Reply.text("back again"))
            ok = say(http, agent["id"], "hello again")
            assert ok.status_code == 200
            history = http.get(f"/v1/agents/{agent['id']}/messages").json()
            texts = [m.get("content") for m in history if m["message_type"] in ("user_message", "assistant_message")]
            assert texts == ["hello again", "back again"]  # the failed turn left no trace but its run
    finally:
        impatient.stop()
        reset_database(pg_uri)


def test_memgpt_agent_edits_core_memory_then_replies(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(
        model="openai/gpt-4o-mini", agent_type="memgpt_agent", memory_blocks=[{"label": "human", "value": "Name: Bob"}]
    )
    names = {t.name for t in client.agents.retrieve(agent.id, include=["agent.tools"]).tools}
    assert {"send_message", "conversation_search", "core_memory_append", "core_memory_replace"} <= names
    mock_llm.script(
        Reply.tool_call(
            "core_memory_append",
            {"label": "human", "content": "Likes tea.", "thinking": "note it", "request_heartbeat": True},
        ),
        Reply.tool_call("send_message", {"message": "Noted, Bob!", "thinking": "reply now"}),
    )
    body = say(http, agent.id, "I like tea").json()
    assert body["stop_reason"]["stop_reason"] == "end_turn"
    assert body["messages"][-1] == {
        **body["messages"][-1],
        "message_type": "assistant_message",
        "content": "Noted, Bob!",
    }
    assert client.agents.blocks.retrieve("human", agent_id=agent.id).value == "Name: Bob\nLikes tea."
    # every tool schema the model saw carries the inner-thoughts parameter first
    tools = mock_llm.requests[0]["tools"]
    assert all(next(iter(t["function"]["parameters"]["properties"])) == "thinking" for t in tools)
