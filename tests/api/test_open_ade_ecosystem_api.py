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


def test_agent_studio_round_trip(client: Letta, mock_llm: MockLLM) -> None:
    """The Agent Studio's calls, as its platform API makes them: an agent on the model router (its own llm_config,
    the router being the server's OPENAI_BASE_URL), a turn, a turn with a datetime system hint, a turn with a model
    and system override, then its edits and the history it shows."""
    router_model = "local_llama_server::gemma4"
    agent = client.agents.create(
        name="studio",
        system="STUDIO-SYSTEM",
        model=f"openai-proxy/{router_model}",  # not listed: the llm_config decides, as on Letta
        timezone="Asia/Shanghai",
        context_window_limit=16384,
        memory_blocks=[{"label": "persona", "value": "P"}, {"label": "human", "value": "H"}],
        llm_config={
            "context_window": 16384,
            "model": router_model,
            "model_endpoint_type": "openai",
            "model_endpoint": mock_llm.base_url,
            "handle": f"openai-proxy/{router_model}",
            "max_tokens": 16384,
            "parallel_tool_calls": False,
        },
    )
    assert agent.model == f"openai-proxy/{router_model}"
    assert {b.label: b.value for b in client.agents.blocks.list(agent_id=agent.id)} == {"persona": "P", "human": "H"}

    mock_llm.script(Reply.text("first"), Reply.text("it is monday"), Reply.text("overridden"))
    first = client.agents.messages.create(agent_id=agent.id, input="hello")
    assert [(m.message_type, m.content) for m in first.messages] == [("assistant_message", "first")]
    sent = mock_llm.requests[-1]
    assert sent["model"] == router_model and sent["messages"][0]["content"].startswith("STUDIO-SYSTEM")
    assert mock_llm.authorizations[-1] == "Bearer sk-mock"  # the server's key goes to its own OPENAI_BASE_URL

    client.agents.messages.create(
        agent_id=agent.id,
        messages=[{"role": "system", "content": "DATETIME-HINT"}, {"role": "user", "content": "what day is it"}],
    )
    assert mock_llm.requests[-1]["messages"][-2:] == [
        {"role": "system", "content": "DATETIME-HINT"},
        {"role": "user", "content": "what day is it"},
    ]

    client.agents.messages.create(
        agent_id=agent.id, input="again", override_model="openai/gpt-4o", extra_body={"system": "OVERRIDE-SYSTEM"}
    )
    assert mock_llm.requests[-1]["model"] == "gpt-4o"
    assert mock_llm.requests[-1]["messages"][0]["content"].startswith("OVERRIDE-SYSTEM")
    assert client.agents.retrieve(agent_id=agent.id).model == f"openai-proxy/{router_model}"  # for that turn only

    assert client.agents.update(agent_id=agent.id, system="EDITED-SYSTEM").system == "EDITED-SYSTEM"
    assert client.agents.update(agent_id=agent.id, model="openai/gpt-4o-mini").model == "openai/gpt-4o-mini"
    edited = client.agents.blocks.update(agent_id=agent.id, block_label="human", value="H2")
    assert (edited.value, edited.limit) == ("H2", 100000)

    history = [(m.message_type, getattr(m, "content", None)) for m in client.agents.messages.list(agent_id=agent.id)]
    assert history[0][0] == "system_message"  # the ADE shows the compiled prompt from the first system message
    assert history[1:] == [
        ("user_message", "hello"),
        ("assistant_message", "first"),
        ("system_message", "DATETIME-HINT"),
        ("user_message", "what day is it"),
        ("assistant_message", "it is monday"),
        ("user_message", "again"),
        ("assistant_message", "overridden"),
    ]
