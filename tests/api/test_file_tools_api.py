"""The file tools as Letta 0.16.8 runs them: what grep_files matches, what open_files opens."""

from typing import Any

from letta_client import Letta

from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, wait_done
from tests.mock_llm import MockLLM, Reply

CODE = b"def outer():\n    def inner():\n        return 1\n"


def agent_with_code(client: Letta) -> Any:
    folder = make_folder(client)
    code = client.folders.files.upload(folder.id, file=("main.py", CODE, "text/x-python"))
    assert wait_done(client, folder.id, code.id).processing_status == "completed"
    agent = client.agents.create(name="coder", model=MODEL, embedding=EMBEDDING)
    client.agents.folders.attach(folder.id, agent_id=agent.id)
    client.agents.files.close(code.id, agent_id=agent.id)
    return agent


def tool_returns(client: Letta, agent_id: str, mock_llm: MockLLM, *calls: Reply) -> list[str]:
    mock_llm.reset()
    mock_llm.script(*calls, Reply.text("done"))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "go"}])
    return [m.tool_return for m in response.messages if m.message_type == "tool_return_message"]


class TestGrepFiles:
    def test_the_pattern_meets_the_line_without_its_indentation(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = agent_with_code(client)
        (found,) = tool_returns(client, agent.id, mock_llm, Reply.tool_call("grep_files", {"pattern": "^def inner"}))
        assert found.startswith("Found 1 total matches across 1 files")
        assert "=== docs/main.py:2 ===\n  1: def outer():\n> 2:     def inner():\n  3:         return 1" in found


class TestOpenFiles:
    def test_line_numbers_sent_as_text_are_read_as_numbers(self, client: Letta, mock_llm: MockLLM) -> None:
        """Models often quote numbers; Letta's request model converts "1" to 1."""
        agent = agent_with_code(client)
        request = {"file_requests": [{"file_name": "docs/main.py", "offset": "1", "length": "1"}]}
        (opened,) = tool_returns(client, agent.id, mock_llm, Reply.tool_call("open_files", request))
        assert opened == "* Opened docs/main.py (lines 2-2)"
        (state,) = client.agents.files.list(agent.id, is_open=True).files
        assert (state.start_line, state.end_line) == (2, 2)

    def test_a_length_without_an_offset_opens_the_whole_file(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = agent_with_code(client)
        request = {"file_requests": [{"file_name": "docs/main.py", "length": 1}]}
        (opened,) = tool_returns(client, agent.id, mock_llm, Reply.tool_call("open_files", request))
        assert opened == "* Opened docs/main.py"
        (state,) = client.agents.files.list(agent.id, is_open=True).files
        assert (state.start_line, state.end_line) == (None, None)
        assert (state.visible_content or "").splitlines()[0] == "[Viewing file start (out of 3 lines)]"
