"""Run traces (Letta's answer without ClickHouse), step traces (kept, as Letta keeps them by default; more in
`test_provider_traces_api.py`) and ``POST /v1/agents/{id}/generate``."""

import httpx
import pytest
from letta_client import APIStatusError, Letta

from tests.mock_llm import MockLLM, Reply

TRACE_501 = "OTEL traces require ClickHouse. Set LETTA_CLICKHOUSE_ENDPOINT and configure ClickHouse connection."


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def make_agent(client: Letta) -> str:
    agent = client.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    return str(agent.id)


def test_traces_answer_as_letta_with_its_default_trace_store(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = make_agent(client)
    mock_llm.script(Reply.text("hi"))
    response = client.agents.messages.create(agent_id=agent_id, input="hello")
    run_id = response.messages[-1].run_id
    assert run_id is not None
    [step] = client.runs.steps.list(run_id=run_id)

    with pytest.raises(APIStatusError) as caught:
        client.runs.trace.retrieve(run_id=run_id)
    assert caught.value.status_code == 501 and caught.value.body == {"detail": TRACE_501}
    assert http.get(f"/v1/runs/{run_id}/trace", params={"limit": 0}).status_code == 422
    unknown = http.get("/v1/runs/run-00000000-0000-4000-8000-000000000000/trace")
    assert unknown.status_code == 404 and "not found" in unknown.json()["detail"]

    trace = client.steps.trace.retrieve(step.id)
    assert trace is not None and trace.step_id == step.id and trace.run_id == run_id
    raw = http.get(f"/v1/steps/{step.id}/trace")
    assert raw.status_code == 200 and raw.json()["id"] == trace.id
    assert http.get("/v1/steps/nope/trace").status_code == 422


def test_generate_returns_the_completion_and_stores_nothing(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = make_agent(client)
    before = [m.id for m in client.agents.messages.list(agent_id=agent_id)]
    mock_llm.script(Reply.text("Paris"))
    response = http.post(
        f"/v1/agents/{agent_id}/generate",
        json={"prompt": "Capital of France?", "system_prompt": "Answer in one word."},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["content"] == "Paris" and body["model"] == "gpt-4o-mini"
    assert body["usage"]["message_type"] == "usage_statistics" and body["usage"]["total_tokens"] > 0

    [sent] = mock_llm.requests
    assert sent["model"] == "gpt-4o-mini" and "tools" not in sent
    assert sent["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert [m.id for m in client.agents.messages.list(agent_id=agent_id)] == before
    assert http.get("/v1/runs/", params={"agent_id": agent_id}).json() == []


def test_generate_with_a_response_schema_forces_the_structured_tool(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = make_agent(client)
    mock_llm.script(Reply.tool_call("structured_output", {"city": "Paris"}))
    schema = {"properties": {"city": {"type": "string"}}}
    response = http.post(f"/v1/agents/{agent_id}/generate", json={"prompt": "Where?", "response_schema": schema})
    assert response.status_code == 200, response.text
    assert response.json()["content"] == '{"city": "Paris"}'
    [sent] = mock_llm.requests
    assert sent["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "structured_output"}}
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["city"]


def test_generate_errors(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent_id = make_agent(client)
    missing = "agent-00000000-0000-4000-8000-000000000000"
    unknown = http.post(f"/v1/agents/{missing}/generate", json={"prompt": "x"})
    assert unknown.status_code == 404 and unknown.json() == {"detail": f"Agent with ID {missing} not found"}
    assert http.post(f"/v1/agents/{agent_id}/generate", json={"prompt": ""}).status_code == 422
    model = http.post(f"/v1/agents/{agent_id}/generate", json={"prompt": "x", "override_model": "openai/nope"})
    assert model.status_code == 404 and model.json() == {"detail": "Model 'openai/nope' not found or not accessible"}
    mock_llm.script(Reply.error(500, times=10))
    failed = http.post(f"/v1/agents/{agent_id}/generate", json={"prompt": "x"})
    assert failed.status_code == 502 and failed.json()["detail"].startswith("LLM provider error: ")
