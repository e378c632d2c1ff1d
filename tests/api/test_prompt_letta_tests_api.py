"""What Letta 0.16.8's tests/test_memory.py and tests/test_client.py pin down, as a letta-client user and the model
see it on memlet: the file layout of react agents' `<directories>` section, and the generate route's prompt check."""

import time
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
NOTES = "Deploy checklist\nThe launch code is PELICAN-42.\n"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def _folder_with_notes(client: Letta) -> Any:
    folder = client.folders.create(name="docs", embedding=EMBEDDING, description="Team docs", instructions="Cite")
    note = client.folders.files.upload(folder.id, file=("notes.txt", NOTES.encode(), "text/plain"))
    deadline = time.monotonic() + 20
    while client.folders.files.retrieve(note.id, folder_id=folder.id).processing_status != "completed":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return folder


def _system_sent(client: Letta, mock_llm: MockLLM, agent_id: str, reply: Reply | None = None) -> str:
    """The system message the model is sent on the agent's next turn."""
    mock_llm.reset()
    mock_llm.script(reply or Reply.text("ok"))
    client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hi"}])
    sent = mock_llm.requests[0]
    content = (sent["input"] if sent.get("_api") == "responses" else sent["messages"])[0]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


# A react agent has no send_message: its turn is one tool call that asks for no heartbeat.
REACT_REPLY = Reply.tool_call("grep_files", {"pattern": "nothing-matches", "request_heartbeat": False})


class TestReactAgentDirectories:
    """Letta renders a react (or workflow) agent's files as `<file status=...>` around an element named after the
    file, with an empty description and a value even when closed (`_render_directories_react`)."""

    def test_open_then_closed_file_layout(self, client: Letta, mock_llm: MockLLM) -> None:
        folder = _folder_with_notes(client)
        agent = client.agents.create(agent_type="react_agent", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)

        system = _system_sent(client, mock_llm, agent.id, REACT_REPLY)
        assert "<memory_blocks>" not in system
        assert (
            '<directory name="docs">\n<description>Team docs</description>\n<instructions>Cite</instructions>\n'
            in system
        )
        assert (
            '<file status="open">\n<docs/notes.txt>\n<description>\n\n</description>\n'
            "<metadata>\n- read_only=true\n- chars_current="
        ) in system
        assert "\n</metadata>\n<value>\n[Viewing file start (out of 2 lines)]\n1: Deploy checklist\n" in system
        assert "2: The launch code is PELICAN-42.\n</value>\n</docs/notes.txt>\n</file>\n</directory>" in system
        assert 'name="docs/notes.txt"' not in system
        assert "- current_files_open=1\n" in system

        client.agents.files.close_all(agent.id)
        system = _system_sent(client, mock_llm, agent.id, REACT_REPLY)
        assert "- current_files_open=0\n" in system
        assert (
            '<file status="closed">\n<docs/notes.txt>\n<description>\n\n</description>\n'
            "<metadata>\n- read_only=true\n- chars_current=0\n- chars_limit="
        ) in system
        assert "</metadata>\n<value>\n\n</value>\n</docs/notes.txt>\n</file>\n</directory>\n</directories>" in system

    def test_other_agent_types_keep_the_named_file_layout(self, client: Letta, mock_llm: MockLLM) -> None:
        folder = _folder_with_notes(client)
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING, folder_ids=[folder.id])
        system = _system_sent(client, mock_llm, agent.id)
        assert '<file status="open" name="docs/notes.txt">\n<metadata>\n- read_only=true\n' in system
        assert "<docs/notes.txt>" not in system


class TestGeneratePrompt:
    """Letta's GenerateRequest refuses a prompt of only whitespace with 422, as it does an empty one."""

    @pytest.mark.parametrize("prompt", ["", "   \n\t  "])
    def test_blank_prompt_is_422_and_nothing_is_sent(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM, prompt: str
    ) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING)
        answer = http.post(f"/v1/agents/{agent.id}/generate", json={"prompt": prompt})
        assert answer.status_code == 422
        assert mock_llm.requests == []


class TestOpenAIFastModels:
    """Letta's OpenAI client sends a `-fast` model (listed as `openai/gpt-5.4-fast`) as the model itself on the
    priority service tier; other providers' model names are sent as they are."""

    def _sent(self, client: Letta, mock_llm: MockLLM, endpoint_type: str, model: str) -> dict[str, Any]:
        agent = client.agents.create(
            llm_config={
                "model": model,
                "model_endpoint_type": endpoint_type,
                "model_endpoint": mock_llm.base_url,
                "context_window": 64000,
            },
            embedding=EMBEDDING,
        )
        _system_sent(client, mock_llm, agent.id)
        return mock_llm.requests[0]

    def test_openai_fast_model_goes_out_on_priority_tier(self, client: Letta, mock_llm: MockLLM) -> None:
        sent = self._sent(client, mock_llm, "openai", "gpt-5.4-fast")
        assert sent["model"] == "gpt-5.4" and sent["service_tier"] == "priority"

    def test_other_models_are_sent_by_their_name(self, client: Letta, mock_llm: MockLLM) -> None:
        sent = self._sent(client, mock_llm, "xai", "grok-3-fast")
        assert sent["model"] == "grok-3-fast" and "service_tier" not in sent
        sent = self._sent(client, mock_llm, "openai", "gpt-5.4")
        assert sent["model"] == "gpt-5.4" and "service_tier" not in sent


class TestRequestSkills:
    """Letta's `compile_available_skills` and the request prompt it is appended to
    (`LettaAgentV2.generate_request_system_prompt`)."""

    def test_first_skill_block_of_a_name_is_the_one_listed(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING)
        for label, description in (("skills/commit", "First"), ("skills/commit/SKILL", "Second")):
            block = client.blocks.create(label=label, value="how", description=description)
            client.agents.blocks.attach(block.id, agent_id=agent.id)
        system = _system_sent(client, mock_llm, agent.id)
        assert system.endswith(
            "<available_skills>\n${MEMORY_DIR}/skills\n└── commit/\n    └── SKILL.md (First)\n</available_skills>"
        )
        assert "(Second)" not in system

    def test_only_trailing_newlines_are_trimmed_before_the_section(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING, system="{CORE_MEMORY}\nBe brief.  \n")
        block = client.blocks.create(label="skills/commit", value="how", description="Commit")
        client.agents.blocks.attach(block.id, agent_id=agent.id)
        system = _system_sent(client, mock_llm, agent.id)
        assert "\nBe brief.  \n\n<available_skills>\n" in system
