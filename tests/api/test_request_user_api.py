"""The `user` field of a model request: the requesting user's id, as Letta's OpenAI client sends it (through
letta-client against the live server)."""

import httpx
from letta_client import Letta

from memlet import ids
from tests.mock_llm import MockLLM, Reply


def test_the_model_request_names_the_requesting_user(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    blocks = [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}]
    agent = client.agents.create(
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        memory_blocks=blocks,  # type: ignore[arg-type]
    )
    mock_llm.reset()
    mock_llm.script(Reply.text("hello"))
    client.agents.messages.create(agent.id, input="hi")
    assert mock_llm.requests[-1]["user"] == ids.DEFAULT_USER_ID
    preview = http.post(f"/v1/agents/{agent.id}/messages/preview-raw-payload", json={"input": "hi"})
    assert preview.status_code == 200, preview.text
    assert preview.json()["user"] == ids.DEFAULT_USER_ID


def test_generate_names_the_requesting_user(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    mock_llm.reset()
    mock_llm.script(Reply.text("Paris"))
    response = http.post(f"/v1/agents/{agent.id}/generate", json={"prompt": "Where?"})
    assert response.status_code == 200, response.text
    assert mock_llm.requests[-1]["user"] == ids.DEFAULT_USER_ID
