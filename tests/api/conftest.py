"""Fixtures shared by the API tests.

`claude_server`: a second live server with an Anthropic key whose base URL is the mock LLM, for the tests that talk
to Claude (it lives for the module); `claude`: a letta-client on it, with the mock reset before each test and the
database wiped after.
"""

from collections.abc import Iterator

import pytest
from letta_client import Letta
from pydantic import SecretStr

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM

ANTHROPIC_KEY = "sk-ant-mock-key"


@pytest.fixture(scope="module")
def claude_server(settings: Settings, mock_llm: MockLLM) -> Iterator[LiveServer]:
    update = {"anthropic_api_key": SecretStr(ANTHROPIC_KEY), "anthropic_base_url": mock_llm.base_url}
    live = LiveServer(settings.model_copy(update=update)).start()
    yield live
    live.stop()


@pytest.fixture
def claude(claude_server: LiveServer, pg_uri: str, mock_llm: MockLLM) -> Iterator[Letta]:
    mock_llm.reset()
    yield Letta(base_url=claude_server.base_url, max_retries=0, timeout=60)
    reset_database(pg_uri)
