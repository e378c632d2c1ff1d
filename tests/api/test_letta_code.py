"""Letta Code 0.32.18, run headless against the live server, with the mock LLM scripted turn by turn.

Each test checks what the user sees (Letta Code's JSON output) and what the model was sent (the mock's records).
They need node; they skip only when node is absent (CI has it).
"""

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.http_proxy import Proxy
from tests.letta_code import LettaCode, install
from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
NODE = shutil.which("node")
pytestmark = [pytest.mark.skipif(NODE is None, reason="Letta Code needs node"), pytest.mark.timeout(300)]


@pytest.fixture(scope="session")
def letta_js() -> Path:
    return install()


@pytest.fixture
def proxy(server: LiveServer) -> Iterator[Proxy]:
    """Letta Code talks to the server through this proxy, which records every call."""
    proxy = Proxy.start(server.base_url)
    yield proxy
    proxy.stop()


@pytest.fixture
def cli(letta_js: Path, proxy: Proxy, tmp_path: Path, mock_llm: MockLLM) -> LettaCode:
    mock_llm.reset()
    home = tmp_path / "home"
    home.mkdir()
    return LettaCode(letta_js, proxy.base_url, home, node=NODE or "node")


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text of every user message in a recorded chat request."""
    texts = []
    for message in request["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def test_new_agent_and_one_turn(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy) -> None:
    mock_llm.script(Reply.text("Hello from memlet."))
    result = cli.run("-p", "Say hello", "--new-agent", "-m", MODEL, "--output-format", "json", "--yolo")
    import json

    for c in proxy.calls:
        print(c.method, c.path, c.status, json.dumps(c.body)[:3000])
    assert result.returncode == 0, result.stderr + result.stdout
    out = result.json()
    assert out["result"] == "Hello from memlet.", out
    assert any("Say hello" in text for text in user_texts(mock_llm.requests[-1]))
