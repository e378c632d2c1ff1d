"""Chat completions beyond Letta's streamed-only route (issue #12 item 4): ``stream: false`` → one ``ChatCompletion``,
the agent's turn lock, and the deprecated voice route, through the official ``openai`` client against the live
server."""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from letta_client import Letta
from openai import OpenAI

from tests.api.test_chat_completions_api import make_agent, openai_client, text_of
from tests.mock_llm import MockLLM, Reply, usage_for


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def ask(server: Any, agent_id: str, text: str) -> Any:
    return openai_client(server).chat.completions.create(model=agent_id, messages=[{"role": "user", "content": text}])


def wait_for_active_run(http: httpx.Client, agent_id: str) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if runs := http.get("/v1/runs/active", params={"agent_id": agent_id}).json():
            return str(runs[0]["id"])
        time.sleep(0.05)
    raise AssertionError("no active run appeared")


class TestNonStreamed:
    def test_answers_one_chat_completion_with_the_runs_usage(
        self, client: Letta, server: Any, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        reply = Reply.text("A complete answer, all at once.").reporting(777)
        mock_llm.script(reply)
        completion = ask(server, agent.id, "answer me")
        assert completion.object == "chat.completion" and completion.model == "gpt-4o-mini"
        assert completion.id.startswith("chatcmpl-run-") and completion.created > 0
        [choice] = completion.choices
        assert choice.message.role == "assistant" and choice.message.content == "A complete answer, all at once."
        assert choice.finish_reason == "stop" and choice.index == 0
        expected = usage_for(mock_llm.requests[-1], reply)
        assert completion.usage is not None
        assert completion.usage.prompt_tokens == 777 == expected["prompt_tokens"]
        assert completion.usage.completion_tokens == expected["completion_tokens"] > 0
        assert completion.usage.total_tokens == expected["total_tokens"]
        run = http.get(f"/v1/runs/{completion.id.removeprefix('chatcmpl-')}").json()
        assert run["status"] == "completed" and run["metadata"]["run_type"] == "openai_chat_completions"

    def test_text_after_a_tool_call_is_the_answer(self, client: Letta, server: Any, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("No tea on record."))
        completion = ask(server, agent.id, "tea?")
        assert completion.choices[0].message.content == "No tea on record."
        assert completion.choices[0].message.tool_calls is None

    def test_llm_failure_is_letta_error_shape_then_the_agent_still_works(
        self, client: Letta, server: Any, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.error(400, times=10, message="model exploded"))
        body = {"model": agent.id, "messages": [{"role": "user", "content": "hi"}]}
        failed = http.post("/v1/chat/completions", json=body)
        assert failed.status_code == 400
        error = failed.json()["error"]
        assert error["type"] == "llm_bad_request" and error["message"] and "model exploded" in error["detail"]
        with pytest.raises(openai.BadRequestError):
            ask(server, agent.id, "hi again")
        mock_llm.reset()
        mock_llm.script(Reply.text("Recovered."))
        assert ask(server, agent.id, "still there?").choices[0].message.content == "Recovered."


class TestTurnLock:
    def test_a_busy_agent_refuses_a_stream_and_queues_a_blocking_request(
        self, client: Letta, server: Any, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.delay(2.0, then=Reply.text("slow answer")), Reply.text("second answer"))
        finished: dict[str, float] = {}

        def timed(text: str) -> str:
            content = ask(server, agent.id, text).choices[0].message.content
            finished[text] = time.monotonic()
            return str(content)

        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(timed, "slow one")
            run_id = wait_for_active_run(http, agent.id)
            with pytest.raises(openai.ConflictError) as busy:
                openai_client(server).chat.completions.create(
                    model=agent.id, messages=[{"role": "user", "content": "me too"}], stream=True
                )
            assert isinstance(busy.value.body, dict) and "CONFLICT" in str(busy.value.body)
            assert busy.value.response.json()["run_id"] == run_id
            second = pool.submit(timed, "me next")
            assert first.result() == "slow answer" and second.result() == "second answer"
        assert finished["slow one"] < finished["me next"]  # the second turn waited for the lock
        history = client.agents.messages.list(agent.id, limit=50).items
        users = [m.content for m in history if m.message_type == "user_message"]
        assert [u for u in users if u in ("slow one", "me too", "me next")] == ["slow one", "me next"]


class TestVoiceRoute:
    def voice_client(self, server: Any, agent_id: str) -> OpenAI:
        return OpenAI(base_url=f"{server.base_url}/v1/voice-beta/{agent_id}", api_key="x", max_retries=0)

    def test_streams_the_agents_reply_as_chunks(self, client: Letta, server: Any, mock_llm: MockLLM) -> None:
        agent = make_agent(client)
        mock_llm.script(Reply.text("Speaking to you from the voice route."))
        stream = self.voice_client(server, agent.id).chat.completions.create(
            model="gpt-4o-mini",  # voice providers name a model; the agent's own decides
            messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "say something"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        assert text_of(chunks) == "Speaking to you from the voice route."
        assert chunks[0].choices[0].delta.role == "assistant" and chunks[0].id.startswith("chatcmpl-run-")
        assert chunks[-2].choices[0].finish_reason == "stop"
        assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        history = client.agents.messages.list(agent.id, limit=50).items
        assert [m.content for m in history if m.message_type == "user_message"] == ["say something"]

    def test_errors(self, client: Letta, server: Any, http: httpx.Client) -> None:
        missing = "agent-00000000-0000-4000-8000-000000000000"
        with pytest.raises(openai.NotFoundError):
            list(
                self.voice_client(server, missing).chat.completions.create(
                    model="x", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            )
        response = http.post(f"/v1/voice-beta/{missing}/chat/completions", json={"messages": []})
        assert response.status_code == 404
        assert response.json() == {"detail": f"Agent with ID {missing} not found"}
        agent = make_agent(client)
        response = http.post(f"/v1/voice-beta/{agent.id}/chat/completions", json={"model": "x"})
        assert response.status_code == 400
        assert response.json() == {"detail": "The 'messages' field is missing in the request."}
        response = http.post(f"/v1/voice-beta/{agent.id}/chat/completions", json={"messages": "hi"})
        assert response.status_code == 400
        response = http.post(f"/v1/voice-beta/{agent.id}/chat/completions", json={"messages": [{"role": "system"}]})
        assert response.status_code == 400 and "No user message found" in response.json()["detail"]
        bad_content = {"messages": [{"role": "user", "content": [1, 2]}]}
        response = http.post(f"/v1/voice-beta/{agent.id}/chat/completions", json=bad_content)
        assert response.status_code == 400 and "content must be a string" in response.json()["detail"]
        response = http.post("/v1/chat/completions", json={"model": agent.id, "stream": False, **bad_content})
        assert response.status_code == 400 and "content must be a string" in response.json()["detail"]
