"""The mock OpenAI-compatible server's wire format, scripting and determinism, checked over raw HTTP."""

import base64
import json
import math
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.mock_llm import Call, MockLLM, Reply, hashed_embedding, script_remote

ROOT = Path(__file__).resolve().parents[2]
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "What is the weather like?"}]}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLM]:
    mock = MockLLM.start()
    yield mock
    mock.stop()


@pytest.fixture
def mock(server: MockLLM) -> MockLLM:
    server.reset()
    return server


def post(mock: MockLLM, path: str, body: dict) -> httpx.Response:
    return httpx.post(f"{mock.base_url}{path}", json=body, timeout=5)


def sse_payloads(response: httpx.Response) -> list:
    lines = [line.removeprefix("data: ") for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


class TestModels:
    def test_lists_model_ids(self, mock: MockLLM) -> None:
        body = httpx.get(f"{mock.base_url}/models", timeout=5).json()
        ids = [m["id"] for m in body["data"]]
        assert body["object"] == "list"
        assert {"gpt-4o-mini", "mock-model"} <= set(ids)


class TestChatCompletions:
    def test_streamed_tool_call_is_split_into_name_and_fragments(self, mock: MockLLM) -> None:
        mock.script(Reply.tool_call("send_message", {"message": "hello from the mock"}, id="call_1"))
        response = post(mock, "/chat/completions", {**BODY, "stream": True})
        assert response.headers["content-type"].startswith("text/event-stream")
        chunks = sse_payloads(response)
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if "tool_calls" in c["choices"][0]["delta"]]
        assert calls[0]["id"] == "call_1"
        assert calls[0]["function"] == {"name": "send_message", "arguments": ""}
        assert all("name" not in c["function"] and "id" not in c for c in calls[1:])
        arguments = "".join(c["function"]["arguments"] for c in calls)
        assert json.loads(arguments) == {"message": "hello from the mock"}
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
        assert all("usage" not in c for c in chunks)

    def test_a_paced_reply_spaces_its_chunks_out(self, mock: MockLLM) -> None:
        gaps: list[float] = []
        mock.script(Reply.text("one two three four").paced(0.05))
        with httpx.stream("POST", f"{mock.base_url}/chat/completions", json={**BODY, "stream": True}) as response:
            last = None
            for line in response.iter_lines():
                if line.startswith("data: "):
                    now = time.monotonic()
                    if last is not None:
                        gaps.append(now - last)
                    last = now
        # The role chunk, four words, the finish chunk and [DONE]: each after the first waits its turn.
        assert len(gaps) == 6 and min(gaps) > 0.03

    def test_usage_chunk_only_when_requested(self, mock: MockLLM) -> None:
        response = post(mock, "/chat/completions", {**BODY, "stream": True, "stream_options": {"include_usage": True}})
        last = sse_payloads(response)[-1]
        assert last["choices"] == []
        assert last["usage"]["prompt_tokens"] > 0
        assert last["usage"]["total_tokens"] == last["usage"]["prompt_tokens"] + last["usage"]["completion_tokens"]

    def test_prompt_tokens_grow_with_the_prompt(self, mock: MockLLM) -> None:
        short = post(mock, "/chat/completions", BODY).json()["usage"]["prompt_tokens"]
        long_messages = [{"role": "user", "content": "word " * 400}]
        long = post(mock, "/chat/completions", {**BODY, "messages": long_messages}).json()["usage"]["prompt_tokens"]
        assert long > short * 10

    def test_non_streamed_parallel_calls(self, mock: MockLLM) -> None:
        mock.script(Reply.tool_calls(Call("a", {"x": 1}), Call("b", '{"broken"')))
        message = post(mock, "/chat/completions", BODY).json()["choices"][0]["message"]
        assert [c["function"]["name"] for c in message["tool_calls"]] == ["a", "b"]
        assert message["tool_calls"][1]["function"]["arguments"] == '{"broken"'
        assert message["tool_calls"][0]["id"] != message["tool_calls"][1]["id"]

    def test_default_reply_is_ok_even_when_tools_are_required(self, mock: MockLLM) -> None:
        body = {**BODY, "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}
        message = post(mock, "/chat/completions", body).json()["choices"][0]["message"]
        assert message["content"] == "OK"
        assert "tool_calls" not in message

    def test_error_repeats_then_default(self, mock: MockLLM) -> None:
        mock.script(Reply.error(status=429, retry_after=7, times=2))
        first, second, third = (post(mock, "/chat/completions", BODY) for _ in range(3))
        assert [first.status_code, second.status_code, third.status_code] == [429, 429, 200]
        assert first.headers["retry-after"] == "7"
        assert "message" in first.json()["error"]

    def test_records_request_bodies_and_resets(self, mock: MockLLM) -> None:
        post(mock, "/chat/completions", {**BODY, "tool_choice": "auto"})
        assert mock.requests == [{**BODY, "tool_choice": "auto"}]
        mock.reset()
        assert mock.requests == []


class TestHttpScripting:
    def test_script_remote_and_read_requests(self, mock: MockLLM) -> None:
        script_remote(mock.base_url, Reply.text("scripted over http"), Reply.delay(0.01, then=Reply.text("later")))
        first = post(mock, "/chat/completions", BODY).json()["choices"][0]["message"]["content"]
        second = post(mock, "/chat/completions", BODY).json()["choices"][0]["message"]["content"]
        assert (first, second) == ("scripted over http", "later")
        recorded = httpx.get(mock.base_url.removesuffix("/v1") + "/_mock/requests", timeout=5).json()
        assert len(recorded["chat"]) == 2


class TestEmbeddings:
    def test_vectors_are_unit_length_and_sized(self, mock: MockLLM) -> None:
        body = {"model": "text-embedding-3-small", "input": ["alpha beta", "gamma"], "encoding_format": "float"}
        data = post(mock, "/embeddings", body).json()["data"]
        assert [d["index"] for d in data] == [0, 1]
        assert all(len(d["embedding"]) == 1536 for d in data)
        assert all(math.isclose(math.hypot(*d["embedding"]), 1.0) for d in data)
        sized = post(mock, "/embeddings", {**body, "dimensions": 32}).json()["data"]
        assert len(sized[0]["embedding"]) == 32

    def test_base64_encoding_matches_floats(self, mock: MockLLM) -> None:
        body = {"model": "text-embedding-3-small", "input": "memory blocks", "dimensions": 16}
        encoded = post(mock, "/embeddings", {**body, "encoding_format": "base64"}).json()["data"][0]["embedding"]
        decoded = struct.unpack("<16f", base64.b64decode(encoded))
        assert list(decoded) == pytest.approx(hashed_embedding("memory blocks", 16))

    def test_deterministic_across_processes(self) -> None:
        code = "import json; from tests.mock_llm import hashed_embedding; print(json.dumps(hashed_embedding('Hi there', 64)))"
        other = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        assert json.loads(other.stdout) == hashed_embedding("Hi there", 64)
        assert hashed_embedding("hi THERE", 64) == hashed_embedding("Hi there", 64)
        assert hashed_embedding("Hi there", 64) != hashed_embedding("Goodbye now", 64)


def test_script_when_answers_matching_requests_from_their_own_queue(mock: MockLLM) -> None:
    mock.script(Reply.text("for anyone"))
    mock.script_when("background agent", Reply.text("for the background agent"))
    background = {**BODY, "messages": [{"role": "system", "content": "You are a background agent"}]}

    def answer(body: dict) -> str:
        return str(post(mock, "/chat/completions", body).json()["choices"][0]["message"]["content"])

    assert answer(background) == "for the background agent"
    assert answer(background) == "OK"  # its queue is empty: the default reply, never the general queue
    assert answer(BODY) == "for anyone"


def with_system(prompt: str, user: str = "What is the weather like?") -> dict:
    return {**BODY, "messages": [{"role": "system", "content": prompt}, {"role": "user", "content": user}]}


def answer_of(mock: MockLLM, body: dict) -> str:
    return str(post(mock, "/chat/completions", body).json()["choices"][0]["message"]["content"])


class TestMarkerRouting:
    def test_concurrent_agents_each_take_their_own_replies_in_order(self, mock: MockLLM) -> None:
        mock.script_when("FIRSTX", Reply.text("first 1"), Reply.text("first 2"))
        mock.script_when("SECONDX", Reply.text("second 1"))
        mock.script_when("FIRSTX", Reply.error(status=503, times=2))  # appended to FIRSTX's queue, each time
        first, second = with_system("I am FIRSTX."), with_system("I am SECONDX.")
        assert answer_of(mock, second) == "second 1"
        assert answer_of(mock, first) == "first 1"
        assert answer_of(mock, second) == "OK"
        assert answer_of(mock, first) == "first 2"
        codes = [post(mock, "/chat/completions", first).status_code for _ in range(3)]
        assert codes == [503, 503, 200]

    def test_a_marker_outside_the_system_prompt_does_not_route(self, mock: MockLLM) -> None:
        mock.script(Reply.text("for anyone"))
        mock.script_when("SENDERX", Reply.text("for the sender"))
        assert answer_of(mock, with_system("I am a receiver.", user="a message from SENDERX")) == "for anyone"
        assert answer_of(mock, with_system("I am SENDERX.")) == "for the sender"

    def test_anthropic_requests_route_by_their_system_field(self, mock: MockLLM) -> None:
        mock.script_when("SENDERX", Reply.text("for the sender"))
        body = {
            "model": "claude-sonnet-4-5-20250929",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
        }
        blocks = [{"type": "text", "text": "I am SENDERX."}]
        plain = httpx.post(f"{mock.base_url}/messages", json=body, timeout=5).json()
        routed = httpx.post(f"{mock.base_url}/messages", json={**body, "system": blocks}, timeout=5).json()
        assert plain["content"] == [{"type": "text", "text": "OK"}]
        assert routed["content"] == [{"type": "text", "text": "for the sender"}]

    def test_script_remote_routes_by_marker(self, mock: MockLLM) -> None:
        script_remote(mock.base_url, Reply.text("remote, for the sender"), when="SENDERX")
        assert answer_of(mock, BODY) == "OK"
        assert answer_of(mock, with_system("I am SENDERX.")) == "remote, for the sender"
