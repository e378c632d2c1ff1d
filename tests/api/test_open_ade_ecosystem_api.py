"""What Letta-Open-ADE (Wenjun-Mao/Letta-Open-ADE, a self-hosted ADE on letta-client 1.8.0) needs from memlet.

Its Agent Platform API drives the Letta server with the Python SDK: it lists `client.models.list()` and offers in its
Agent Studio only the model router's models whose Letta handle, `openai-proxy/<model>`, is listed there (Letta 0.16.8
names the models of an OPENAI_BASE_URL that is not api.openai.com so); it creates agents with that handle, a `system`
prompt and `persona`/`human` blocks, chats with `messages.create(input=...)` (or a system hint plus the user's
message, or `override_model` and a `system` override in `extra_body`), edits the system prompt, model and blocks, and
reads the history with `messages.list`.
"""

from collections.abc import Iterator

import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

PROXY_MODEL = "openai-proxy/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(scope="module")
def proxy_server(settings: Settings) -> Iterator[LiveServer]:
    live = LiveServer(settings.model_copy(update={"openai_proxy_handles": True})).start()
    yield live
    live.stop()


@pytest.fixture
def proxy(proxy_server: LiveServer, pg_uri: str, mock_llm: MockLLM) -> Iterator[Letta]:
    mock_llm.reset()
    yield Letta(base_url=proxy_server.base_url, max_retries=0, timeout=60)
    reset_database(pg_uri)
    mock_llm.reset()


def test_an_openai_compatible_server_is_listed_under_letta_handles(proxy: Letta, mock_llm: MockLLM) -> None:
    handles = [m.handle for m in proxy.models.list()]
    assert PROXY_MODEL in handles  # what the ADE looks for before it offers a model
    assert "openai/gpt-4o-mini" not in handles
    # Letta names only the chat models so; embeddings keep `openai/<model>`.
    assert EMBEDDING in [e.handle for e in proxy.models.embeddings.list()]

    agent = proxy.agents.create(
        name="studio",
        system="You are a studio agent.",
        model=PROXY_MODEL,
        embedding=EMBEDDING,
        timezone="Asia/Shanghai",
        context_window_limit=16384,
        memory_blocks=[{"label": "persona", "value": "P"}, {"label": "human", "value": "H"}],
    )
    assert agent.model == PROXY_MODEL
    assert agent.llm_config.handle == PROXY_MODEL
    assert agent.llm_config.provider_name == "openai"
    assert proxy.agents.retrieve(agent.id).model == PROXY_MODEL

    mock_llm.script(Reply.text("hello from the router"))
    response = proxy.agents.messages.create(agent_id=agent.id, input="hi")
    assert [m.content for m in response.messages if m.message_type == "assistant_message"] == ["hello from the router"]
    assert mock_llm.requests[-1]["model"] == "gpt-4o-mini"
