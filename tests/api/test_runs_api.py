"""Runs and steps through letta-client after real sends: shapes vs Letta samples, filters, usage, feedback."""

import json
import time
from typing import Any

import httpx
import pytest
from letta_client import Letta, NotFoundError

from tests.mock_llm import MockLLM, Reply
from tests.shared_paths import SAMPLES

BLOCKS = [{"label": "human", "value": "The human's name is Bob."}, {"label": "persona", "value": "I am Sam."}]


def make_agent(client: Letta) -> Any:
    return client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", memory_blocks=BLOCKS
    )  # type: ignore[arg-type]


def send(http: httpx.Client, agent_id: str, text: str, **body: Any) -> dict[str, Any]:
    response = http.post(
        f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}], **body}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


@pytest.fixture
def sent(http: httpx.Client, client: Letta, mock_llm: MockLLM) -> tuple[str, str]:
    """An agent after one two-step send (a tool call, then a reply); returns (agent_id, run_id)."""
    agent = make_agent(client)
    mock_llm.script(
        Reply.tool_call("memory_insert", {"label": "human", "new_string": "Bob has a cat."}), Reply.text("ok")
    )
    body = send(http, agent.id, "remember the cat")
    return str(agent.id), str(body["messages"][0]["run_id"])


class TestRetrieveRun:
    def test_shape_matches_sample(self, http: httpx.Client, sent: tuple[str, str]) -> None:
        agent_id, run_id = sent
        run = http.get(f"/v1/runs/{run_id}").json()
        sample = json.loads((SAMPLES / "run.json").read_text())
        assert list(run) == list(sample)
        assert run["status"] == "completed" and run["stop_reason"] == "end_turn"
        assert run["agent_id"] == agent_id and run["background"] is False
        assert run["metadata"] == {"run_type": "send_message"}
        assert run["request_config"] == sample["request_config"]
        assert run["created_at"].endswith("Z") and run["completed_at"] and "+" not in run["completed_at"]

    def test_bad_and_unknown_ids(self, http: httpx.Client, client: Letta) -> None:
        response = http.get("/v1/runs/nope")
        assert response.status_code == 400
        assert response.json() == {
            "detail": "INVALID_ARGUMENT: Invalid run ID format: nope. Expected format: 'run-<uuid4>'"
        }
        missing = "run-00000000-0000-4000-8000-000000000000"
        with pytest.raises(NotFoundError):
            client.runs.retrieve(missing)
        assert http.get(f"/v1/runs/{missing}").json() == {"detail": f"Run with id {missing} not found"}


class TestListRuns:
    def test_newest_first_with_filters(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        other = make_agent(client)
        ids = [send(http, agent.id, f"m{i}")["messages"][0]["run_id"] for i in range(3)]
        send(http, other.id, "elsewhere")
        runs = client.runs.list(agent_id=agent.id).items
        assert [r.id for r in runs] == ids[::-1]
        assert set(runs[0].model_dump()) >= set(json.loads((SAMPLES / "list_runs.json").read_text())[0])
        assert [r.id for r in client.runs.list(agent_id=agent.id, order="asc").items] == ids
        assert client.runs.list(agent_id=agent.id, statuses=["failed"]).items == []
        assert client.runs.list(agent_id=agent.id, active=True).items == []
        assert len(client.runs.list(stop_reason="end_turn").items) == 4

    def test_auto_pagination_walks_every_run_once(self, http: httpx.Client, client: Letta) -> None:
        agent = make_agent(client)
        ids = [send(http, agent.id, f"m{i}")["messages"][0]["run_id"] for i in range(3)]
        assert [r.id for r in client.runs.list(agent_id=agent.id, limit=2)] == ids[::-1]


class TestRunDetails:
    def test_messages_include_input(self, client: Letta, sent: tuple[str, str]) -> None:
        _, run_id = sent
        messages = client.runs.messages.list(run_id).items
        assert [m.message_type for m in messages] == [
            "user_message",
            "tool_call_message",
            "tool_return_message",
            "assistant_message",
        ]
        assert all(m.run_id == run_id for m in messages)
        sample = json.loads((SAMPLES / "run_messages.json").read_text())
        assert set(messages[0].model_dump()) == set(sample[0])

    def test_usage_sums_steps(self, http: httpx.Client, sent: tuple[str, str]) -> None:
        _, run_id = sent
        usage = http.get(f"/v1/runs/{run_id}/usage").json()
        steps = http.get(f"/v1/runs/{run_id}/steps").json()
        assert len(steps) == 2
        assert usage["total_tokens"] == sum(s["total_tokens"] for s in steps) > 0
        assert usage["prompt_tokens"] + usage["completion_tokens"] == usage["total_tokens"]

    def test_steps_match_sample_and_newest_first(self, http: httpx.Client, sent: tuple[str, str]) -> None:
        agent_id, run_id = sent
        steps = http.get(f"/v1/runs/{run_id}/steps").json()
        sample = json.loads((SAMPLES / "run_steps.json").read_text())[0]
        assert list(steps[0]) == list(sample)
        assert steps[0]["stop_reason"] == "end_turn" and steps[1]["stop_reason"] is None
        assert all(s["status"] == "success" and s["agent_id"] == agent_id for s in steps)
        assert steps[0]["model"] == "gpt-4o-mini" and steps[0]["messages"] == []

    def test_metrics(self, http: httpx.Client, sent: tuple[str, str]) -> None:
        _, run_id = sent
        metrics = http.get(f"/v1/runs/{run_id}/metrics").json()
        assert metrics["id"] == run_id and metrics["num_steps"] == 2
        assert metrics["run_ns"] and metrics["run_ns"] > 0

    def test_steps_and_metrics_carry_the_agents_project(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = client.agents.create(
            model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", project_id="project-x"
        )
        run_id = send(http, agent.id, "hi")["messages"][0]["run_id"]
        (step,) = client.steps.list(agent_id=agent.id).items
        assert step.project_id == "project-x"
        assert http.get(f"/v1/steps/{step.id}/metrics").json()["project_id"] == "project-x"
        assert http.get(f"/v1/runs/{run_id}/metrics").json()["project_id"] == "project-x"

    def test_metrics_list_each_tool_used_once_by_id(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        insert = Reply.tool_call("memory_insert", {"label": "human", "new_string": "Bob has a cat."})
        mock_llm.script(insert, insert, Reply.text("ok"), Reply.text("plain"))
        busy = send(http, agent.id, "remember the cat twice")["messages"][0]["run_id"]
        idle = send(http, agent.id, "hello")["messages"][0]["run_id"]
        tool_id = next(t.id for t in client.agents.tools.list(agent.id) if t.name == "memory_insert")
        assert http.get(f"/v1/runs/{busy}/metrics").json()["tools_used"] == [tool_id]
        assert http.get(f"/v1/runs/{idle}/metrics").json()["tools_used"] is None

    def test_delete(self, http: httpx.Client, client: Letta, sent: tuple[str, str]) -> None:
        _, run_id = sent
        assert http.delete(f"/v1/runs/{run_id}").status_code == 200
        assert http.get(f"/v1/runs/{run_id}").status_code == 404
        assert http.delete(f"/v1/runs/{run_id}").status_code == 404


class TestSteps:
    def test_list_retrieve_and_messages(self, http: httpx.Client, client: Letta, sent: tuple[str, str]) -> None:
        agent_id, run_id = sent
        steps = client.steps.list(agent_id=agent_id).items
        assert len(steps) == 2 and all(s.run_id == run_id for s in steps)
        first = steps[-1]
        assert client.steps.retrieve(first.id).id == first.id
        messages = client.steps.messages.list(first.id).items
        assert [m.message_type for m in messages] == ["user_message", "tool_call_message", "tool_return_message"]

    def test_a_v2_steps_messages_show_thoughts_as_reasoning_last_part_first(
        self, http: httpx.Client, client: Letta, mock_llm: MockLLM
    ) -> None:
        agent = client.agents.create(
            model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", agent_type="memgpt_v2_agent"
        )
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet.", "message": "Hi!"}))
        send(http, agent.id, "hello")
        (step,) = client.steps.list(agent_id=agent.id).items
        messages = client.steps.messages.list(step.id).items
        # As Letta's step route converts them: each row's parts last first, inner thoughts as reasoning.
        assert [m.message_type for m in messages] == ["user_message", "assistant_message", "reasoning_message"]
        assert messages[2].reasoning == "Greet."

    def test_feedback(self, http: httpx.Client, client: Letta, sent: tuple[str, str]) -> None:
        agent_id, _ = sent
        step = client.steps.list(agent_id=agent_id).items[0]
        updated = client.steps.feedback.create(step.id, feedback="positive", tags=["good"])
        assert updated.feedback == "positive" and updated.tags == ["good"]
        kept = client.steps.feedback.create(step.id, feedback="positive", tags=[])  # as Letta: [] keeps them
        assert kept.tags == ["good"]
        assert [s.id for s in client.steps.list(feedback="positive").items] == [step.id]
        assert len(client.steps.list(has_feedback=False, agent_id=agent_id).items) == 1

    def test_metrics_time_each_step(self, http: httpx.Client, client: Letta, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        insert = Reply.tool_call("memory_insert", {"label": "human", "new_string": "Bob has a cat."})
        mock_llm.script(Reply.delay(0.3, insert), Reply.text("ok"))
        before = time.time_ns()
        send(http, agent.id, "remember the cat")
        after = time.time_ns()
        steps = client.steps.list(agent_id=agent.id).items[::-1]  # newest first: the first step last
        first, second = (http.get(f"/v1/steps/{s.id}/metrics").json() for s in steps)
        assert first["id"] == steps[0].id and first["agent_id"] == agent.id and first["run_id"] == steps[0].run_id
        assert first["llm_request_ns"] >= 300_000_000  # the model took 0.3 s
        assert first["tool_execution_ns"] > 0 and second["tool_execution_ns"] is None  # no tool in the reply step
        assert first["step_ns"] >= first["llm_request_ns"] + first["tool_execution_ns"]
        assert 0 < second["llm_request_ns"] < 300_000_000 and second["step_ns"] >= second["llm_request_ns"]
        starts = [first["step_start_ns"], first["llm_request_start_ns"], second["step_start_ns"]]
        assert before <= starts[0] <= starts[1] < starts[2] <= after

    def test_unknown_step_404(self, http: httpx.Client) -> None:
        response = http.get("/v1/steps/step-00000000-0000-4000-8000-000000000000")
        assert response.status_code == 404
