"""Model handles as Letta 0.16.8 lists them (its tests create agents on `anthropic/claude-haiku-4-5`): a few
Anthropic and api.openai.com models are listed under a short handle while the config keeps the provider's id.

A live server of its own has ANTHROPIC_API_KEY set and Anthropic's base URL pointed at the mock."""

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

EMBEDDING = "openai/text-embedding-3-small"


def test_dated_anthropic_models_are_listed_under_letta_short_handles(claude: Letta) -> None:
    listed = {m.handle: m for m in claude.models.list() if m.provider_name == "anthropic"}
    assert "anthropic/claude-haiku-4-5" in listed and "anthropic/claude-3-5-haiku" in listed
    assert "anthropic/claude-haiku-4-5-20251001" not in listed
    assert listed["anthropic/claude-haiku-4-5"].model == "claude-haiku-4-5-20251001"
    assert listed["anthropic/claude-3-5-haiku"].model == "claude-3-5-haiku-20241022"
    # A model without a short name keeps its id in the handle.
    assert listed["anthropic/claude-sonnet-4-5-20250929"].model == "claude-sonnet-4-5-20250929"


def test_agent_on_a_short_handle_calls_the_dated_model(claude: Letta, mock_llm: MockLLM) -> None:
    agent = claude.agents.create(model="anthropic/claude-haiku-4-5", embedding=EMBEDDING)
    assert agent.llm_config.handle == "anthropic/claude-haiku-4-5"
    assert agent.llm_config.model == "claude-haiku-4-5-20251001"
    assert agent.model == "anthropic/claude-haiku-4-5"
    mock_llm.script(Reply.text("hello"))
    claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert mock_llm.requests[-1]["model"] == "claude-haiku-4-5-20251001"


def test_the_dated_handle_still_resolves(claude: Letta) -> None:
    # Not listed by Letta (which answers 404 for it); memlet keeps accepting it, for agents scripted against it.
    agent = claude.agents.create(model="anthropic/claude-haiku-4-5-20251001", embedding=EMBEDDING)
    assert agent.llm_config.model == "claude-haiku-4-5-20251001"
