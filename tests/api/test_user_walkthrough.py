"""The walkthrough a user sent us: a DeepSeek llm_config, an Ollama embedding_config, Chinese memory blocks, and a
correction the agent must write into its human block (the mock LLM stands in for DeepSeek at its endpoint)."""

from collections.abc import Iterator

import httpx
import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.listener import start_server
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply


@pytest.fixture
def server(settings: Settings, pg_uri: str) -> Iterator[LiveServer]:
    """The user's Ollama embedding endpoint is on loopback: the operator allows exactly that host and port."""
    with start_server(settings, pg_uri, allowed_hosts="127.0.0.1:11434") as server:
        yield server


def test_deepseek_agent_corrects_its_human_block(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    mock_llm.reset()
    agent = client.agents.create(
        name="小助手",
        llm_config={
            "model": "deepseek-chat",
            "model_endpoint_type": "deepseek",
            "model_endpoint": mock_llm.base_url,
            "context_window": 64000,
        },
        embedding_config={
            "embedding_endpoint_type": "ollama",
            "embedding_endpoint": "http://127.0.0.1:11434",
            "embedding_model": "nomic-embed-text",
            "embedding_dim": 768,
        },
        memory_blocks=[
            {"label": "human", "value": "用户的名字是小明。"},
            {"label": "persona", "value": "我是一个乐于助人的中文助手。"},
        ],
    )
    mock_llm.script(
        Reply.tool_call("memory_replace", {"label": "human", "old_string": "小明", "new_string": "阿里巴巴"}),
        Reply.text("好的，阿里巴巴，我记住了！"),
    )
    response = http.post(
        f"/v1/agents/{agent.id}/messages",
        json={"messages": [{"role": "user", "content": "我不叫小明，我叫阿里巴巴"}], "stream": False},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["stop_reason"]["stop_reason"] == "end_turn"
    types = [m["message_type"] for m in body["messages"]]
    assert types == ["tool_call_message", "tool_return_message", "assistant_message"]
    assert body["messages"][-1]["content"] == "好的，阿里巴巴，我记住了！"

    human = client.agents.blocks.retrieve("human", agent_id=agent.id)
    assert human.value == "用户的名字是阿里巴巴。"
    # DeepSeek's endpoint got the user's words; the stored prompt now carries the corrected block.
    assert mock_llm.requests[-2]["model"] == "deepseek-chat"
    assert any("我不叫小明，我叫阿里巴巴" in str(m.get("content")) for m in mock_llm.requests[-2]["messages"])
    history = client.agents.messages.list(agent.id).items
    assert [m.message_type for m in history][-4:] == ["user_message", *types]
    system = next(m for m in history if m.message_type == "system_message")
    assert "用户的名字是阿里巴巴。" in system.content


def test_walkthrough_embedding_config_archival_insert_and_search(client: Letta, mock_llm: MockLLM) -> None:
    """The walkthrough's Ollama embedding config (nomic-embed-text, 768) through the archival API and the loop's
    archival tools; the mock LLM answers Ollama's native /api/embed at the configured endpoint."""
    mock_llm.reset()
    agent = client.agents.create(
        name="档案员",
        llm_config={
            "model": "deepseek-chat",
            "model_endpoint_type": "deepseek",
            "model_endpoint": mock_llm.base_url,
            "context_window": 64000,
        },
        embedding_config={
            "embedding_endpoint_type": "ollama",
            "embedding_endpoint": mock_llm.base_url.removesuffix("/v1"),
            "embedding_model": "nomic-embed-text",
            "embedding_dim": 768,
        },
        tools=["archival_memory_insert", "archival_memory_search"],
    )
    client.agents.passages.create(agent.id, text="阿里巴巴 likes green tea")
    mock_llm.script(
        Reply.tool_call(
            "archival_memory_insert", {"content": "the meeting moved to Thursday", "request_heartbeat": True}
        ),
        Reply.tool_call("archival_memory_search", {"query": "meeting Thursday", "top_k": 1, "request_heartbeat": True}),
        Reply.text("记住了"),
    )
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "记住：会议改到周四"}])
    found = client.agents.passages.search(agent.id, query="green tea", top_k=1)
    assert [r.content for r in found.results] == ["阿里巴巴 likes green tea"]
    tool_return = next(
        m
        for m in client.agents.messages.list(agent.id).items
        if m.message_type == "tool_return_message" and "Thursday" in str(m.tool_return)
    )
    assert "the meeting moved to Thursday" in str(tool_return.tool_return)
    embeds = mock_llm.embedding_requests
    assert embeds and {r["_api"] for r in embeds} == {"ollama"} and {r["model"] for r in embeds} == {"nomic-embed-text"}
