"""The summarizer's request to the provider, as Letta 0.16.8's summarizer builds it: through the same client's request
builder as a step's (as a letta_v1 agent's request, without tools, with reasoning switched off), so it carries the
per-provider fields a step's request carries for that model: the requesting user's id, GLM-5's `stop`, the
Responses API call of OpenAI's reasoners (with their reasoning effort), and thinking switched off where the step
has it on. Checked in what the mock was sent, for the loop's compaction and for `POST /v1/agents/{id}/summarize`."""

import json
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet import ids
from memlet.llm.model_quirks import GLM5_STOP
from tests.mock_llm import MockLLM, Reply

HI = {"messages": [{"role": "user", "content": "hi"}], "streaming": False}


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def raw_agent(http: httpx.Client, mock_llm: MockLLM, model: str, endpoint_type: str, **config: Any) -> str:
    llm_config = {
        "model": model,
        "model_endpoint_type": endpoint_type,
        "model_endpoint": mock_llm.base_url,
        "provider_name": endpoint_type,
        "context_window": 32000,
        "handle": f"{endpoint_type}/{model}",
        **config,
    }
    created = http.post("/v1/agents/", json={"llm_config": llm_config, "include_base_tools": False})
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


def chat(http: httpx.Client, mock_llm: MockLLM, agent_id: str, turns: int = 2) -> dict[str, Any]:
    """A few turns; the last step's request."""
    for i in range(turns):
        mock_llm.script(Reply.text(f"reply {i}"))
        response = http.post(
            f"/v1/agents/{agent_id}/messages", json={**HI, "messages": [{"role": "user", "content": f"m{i}"}]}
        )
        assert response.status_code == 200, response.text
    return mock_llm.requests[-1]


def summarize(http: httpx.Client, mock_llm: MockLLM, agent_id: str) -> dict[str, Any]:
    mock_llm.script(Reply.text("They said hello."))
    response = http.post(f"/v1/agents/{agent_id}/summarize", json={"compaction_settings": {"mode": "all"}})
    assert response.status_code == 200, response.text
    return mock_llm.requests[-1]


def test_a_glm5_summary_in_the_loop_carries_stop_user_and_thinking_off(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = raw_agent(http, mock_llm, "glm-5", "zai")
    step = chat(http, mock_llm, agent_id)
    assert step["stop"] == list(GLM5_STOP) and step["thinking"] == {"type": "enabled", "clear_thinking": False}
    mock_llm.reset()
    # The provider says the prompt overflowed: the loop compacts (one summary call) and retries the step.
    mock_llm.script(Reply.overflow(window=32000, used=40000), Reply.text("Summary of m0 and m1."), Reply.text("ok"))
    response = http.post(f"/v1/agents/{agent_id}/messages", json=HI)
    assert response.status_code == 200, response.text
    summary = mock_llm.requests[1]
    assert "tools" not in summary and "m0" in str(summary["messages"])
    assert summary["stop"] == list(GLM5_STOP)
    assert summary["thinking"] == {"type": "disabled"}  # Letta's summarizer switches reasoning off
    assert summary["user"] == ids.DEFAULT_USER_ID
    assert "chat_template_args" not in summary


def test_a_summary_on_openrouter_and_baseten_asks_for_no_reasoning(http: httpx.Client, mock_llm: MockLLM) -> None:
    routed = raw_agent(http, mock_llm, "glm-5", "openrouter")
    assert chat(http, mock_llm, routed, turns=1)["reasoning"] == {"enabled": True}
    sent = summarize(http, mock_llm, routed)
    assert "reasoning" not in sent and sent["stop"] == list(GLM5_STOP) and sent["user"] == ids.DEFAULT_USER_ID
    kimi = raw_agent(http, mock_llm, "moonshotai/Kimi-K2.5", "baseten")
    assert chat(http, mock_llm, kimi, turns=1)["chat_template_args"] == {"enable_thinking": True}
    assert "chat_template_args" not in summarize(http, mock_llm, kimi)


def test_an_openai_reasoners_summary_goes_through_the_responses_api(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = raw_agent(http, mock_llm, "o3-mini", "openai", reasoning_effort="low")
    step = chat(http, mock_llm, agent_id, turns=1)
    assert step["_api"] == "responses"
    sent = summarize(http, mock_llm, agent_id)
    # Letta builds the summary as a letta_v1 agent's request: for this model, an unstreamed Responses call with
    # the config's reasoning effort and a detailed summary, no tools, nothing stored at OpenAI.
    assert sent["_api"] == "responses" and "messages" not in sent and not sent.get("stream")
    assert [item["role"] for item in sent["input"]] == ["developer", "user"]
    assert "m0" in sent["input"][1]["content"][0]["text"]
    assert sent["reasoning"] == {"effort": "low", "summary": "detailed"}
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert sent["tools"] is None and sent["temperature"] is None
    assert sent["user"] == ids.DEFAULT_USER_ID


def test_an_openai_reasoners_summary_in_the_loop_goes_through_the_responses_api(
    http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = raw_agent(http, mock_llm, "gpt-5", "openai", reasoning_effort="medium")
    chat(http, mock_llm, agent_id)
    mock_llm.reset()
    mock_llm.script(Reply.overflow(window=32000, used=40000), Reply.text("Summary of m0 and m1."), Reply.text("ok"))
    response = http.post(f"/v1/agents/{agent_id}/messages", json=HI)
    assert response.status_code == 200, response.text
    summary = mock_llm.requests[1]
    assert summary["_api"] == "responses" and summary["reasoning"] == {"effort": "medium", "summary": "detailed"}
    assert summary["tools"] is None and "m0" in str(summary["input"])
    stored = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 50}).json()
    assert any("Summary of m0 and m1." in json.dumps(m) for m in stored)


def test_an_agent_that_asks_for_logprobs_asks_for_them_in_its_summary(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = raw_agent(http, mock_llm, "gpt-4o-mini", "openai", return_logprobs=True, top_logprobs=2)
    assert chat(http, mock_llm, agent_id, turns=1)["logprobs"] is True
    sent = summarize(http, mock_llm, agent_id)
    assert (sent["logprobs"], sent["top_logprobs"]) == (True, 2)


def test_an_anthropic_summary_is_streamed_without_thinking(claude: Letta, mock_llm: MockLLM) -> None:
    agent = claude.agents.create(model="anthropic/claude-sonnet-4-5-20250929", include_base_tools=False)
    mock_llm.script(Reply.text("hello"))
    claude.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert mock_llm.requests[-1]["thinking"]["type"] == "enabled"
    mock_llm.script(Reply.text("They greeted each other."))
    result = claude.agents.messages.compact(agent.id, compaction_settings={"mode": "all"})
    assert result.summary == "They greeted each other."
    sent = mock_llm.requests[-1]
    assert sent["_api"] == "anthropic" and "tools" not in sent
    assert "thinking" not in sent and sent["stream"] is True
