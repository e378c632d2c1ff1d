"""LETTA_DEFAULT_LLM_HANDLE / LETTA_DEFAULT_EMBEDDING_HANDLE (or their MEMLET_ names): the model and embedding of an
agent created without one, as in Letta's `SyncServer.create_agent_async`."""

import pytest
from letta_client import Letta

from memlet.config import Settings
from tests.api.test_agents_api import EMBEDDING, MODEL
from tests.conftest import LiveServer, reset_database


@pytest.mark.parametrize("prefix", ["LETTA", "MEMLET"])
def test_both_names_are_read(monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    monkeypatch.setenv(f"{prefix}_DEFAULT_LLM_HANDLE", MODEL)
    monkeypatch.setenv(f"{prefix}_DEFAULT_EMBEDDING_HANDLE", EMBEDDING)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.default_llm_handle, settings.default_embedding_handle) == (MODEL, EMBEDDING)


def test_an_agent_without_model_or_embedding_gets_the_defaults(settings: Settings, pg_uri: str) -> None:
    defaults = {"default_llm_handle": MODEL, "default_embedding_handle": EMBEDDING}
    server = LiveServer(settings.model_copy(update=defaults)).start()
    try:
        client = Letta(base_url=server.base_url, max_retries=0, timeout=60)
        agent = client.agents.create(name="defaulted")
        assert (agent.model, agent.embedding) == (MODEL, EMBEDDING)
        # A named model or embedding wins.
        named = client.agents.create(name="named", model="openai/gpt-4o", embedding_config=agent.embedding_config)
        assert named.model == "openai/gpt-4o" and named.embedding == EMBEDDING
    finally:
        server.stop()
        reset_database(pg_uri)
