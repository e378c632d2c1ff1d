"""A send's per-request overrides (`override_model`, `override_system` / `system`) through raw HTTP."""

import httpx
import pytest
from letta_client import Letta

from tests.api.test_messages_api import make_agent, send
from tests.mock_llm import MockLLM, Reply


class TestOverrideModel:
    def test_override_model_applies_to_one_request(self, client, http, mock_llm) -> None:  # type: ignore[no-untyped-def]
        mock_llm.reset()
        agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
        body = {"messages": [{"role": "user", "content": "hi"}], "override_model": "openai/mock-model"}
        assert http.post(f"/v1/agents/{agent.id}/messages", json=body).status_code == 200
        assert mock_llm.requests[-1]["model"] == "mock-model"
        http.post(f"/v1/agents/{agent.id}/messages", json={"messages": [{"role": "user", "content": "again"}]})
        assert mock_llm.requests[-1]["model"] == "gpt-4o-mini"
        assert client.agents.retrieve(agent.id).model == "openai/gpt-4o-mini"

    def test_unknown_override_is_404_and_runs_nothing(self, client, http, mock_llm) -> None:  # type: ignore[no-untyped-def]
        mock_llm.reset()
        agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
        body = {"messages": [{"role": "user", "content": "hi"}], "override_model": "openai/nope"}
        response = http.post(f"/v1/agents/{agent.id}/messages", json=body)
        assert response.status_code == 404
        assert "openai/nope" in response.json()["detail"]
        assert mock_llm.requests == []


class TestOverrideSystem:
    @pytest.mark.parametrize("field", ["override_system", "system"])
    def test_the_system_prompt_is_replaced_for_one_request(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM, field: str
    ) -> None:
        mock_llm.reset()
        agent = make_agent(client)
        mock_llm.script(Reply.text("Arr."), Reply.text("Hello."))
        assert send(http, agent.id, "hi", **{field: "You are a pirate."}).status_code == 200
        overridden = mock_llm.requests[-1]["messages"][0]
        assert overridden == {"role": "system", "content": "You are a pirate."}
        preview = http.post(
            f"/v1/agents/{agent.id}/messages/preview-raw-payload",
            json={"messages": [{"role": "user", "content": "x"}], field: "You are a pirate."},
        ).json()
        assert preview["messages"][0]["content"] == "You are a pirate."
        assert send(http, agent.id, "again").status_code == 200
        stored = mock_llm.requests[-1]["messages"][0]["content"]
        assert "You are a pirate." not in stored and "The human's name is Bob." in stored
