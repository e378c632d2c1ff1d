"""Letta Code 0.32.18, run headless against the live server, with the mock LLM scripted turn by turn.

Each test checks what the user sees (Letta Code's JSON output) and what the model was sent (the mock's records).
They need node; they skip only when node is absent (CI has it).
"""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.http_proxy import Proxy
from tests.letta_code import LettaCode, install
from tests.mock_llm import Call, MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
NODE = shutil.which("node")
pytestmark = [pytest.mark.skipif(NODE is None, reason="Letta Code needs node"), pytest.mark.timeout(300)]


@pytest.fixture(scope="session")
def letta_js() -> Path:
    return install()


@pytest.fixture
def proxy(server: LiveServer) -> Iterator[Proxy]:
    """Letta Code talks to the server through this proxy, which records every call."""
    proxy = Proxy.start(server.base_url)
    yield proxy
    proxy.stop()


@pytest.fixture
def cli(letta_js: Path, proxy: Proxy, tmp_path: Path, mock_llm: MockLLM) -> LettaCode:
    mock_llm.reset()
    home = tmp_path / "home"
    home.mkdir()
    return LettaCode(letta_js, proxy.base_url, home, node=NODE or "node")


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text of every user message in a recorded chat request."""
    texts = []
    for message in request["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def tool_texts(request: dict[str, Any]) -> list[str]:
    """The content of every tool message in a recorded chat request."""
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def new_agent_turn(cli: LettaCode, prompt: str, *extra: str) -> dict[str, Any]:
    result = cli.run("-p", prompt, "--new-agent", "-m", MODEL, "--output-format", "json", "--yolo", *extra)
    assert result.returncode == 0, result.stderr + result.stdout
    return dict(result.json())


def test_new_agent_and_one_turn(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy) -> None:
    mock_llm.script(Reply.text("Hello from memlet."))
    out = new_agent_turn(cli, "Say hello")
    assert out["subtype"] == "success" and out["is_error"] is False
    assert out["result"] == "Hello from memlet."
    assert out["agent_id"].startswith("agent-") and out["conversation_id"].startswith("conv-")
    (request,) = mock_llm.requests
    assert user_texts(request)[-1].endswith("Say hello")
    system = request["messages"][0]["content"]
    assert system.startswith("You are Letta Code")
    # Letta Code's client tools and skills reach the model.
    assert "exec_command" in {t["function"]["name"] for t in request["tools"]}
    assert "<available_skills>" in system and "SKILL.md" in system
    (send,) = proxy.find("POST", f"/v1/conversations/{out['conversation_id']}/messages")
    assert send.status == 200 and send.body["client_tools"] and send.body["include_compaction_messages"] is True
    assert send.body["background"] is True and send.body["streaming"] is True


def test_second_turn_in_the_same_conversation(cli: LettaCode, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("Noted: your number is 7."), Reply.text("Your number was 7."))
    first = new_agent_turn(cli, "My lucky number is 7.")
    conversation = first["conversation_id"]
    result = cli.run("-p", "What was my number?", "--conversation", conversation, "--output-format", "json", "--yolo")
    assert result.returncode == 0, result.stderr + result.stdout
    second = result.json()
    assert second["result"] == "Your number was 7."
    assert second["conversation_id"] == conversation and second["agent_id"] == first["agent_id"]
    last = mock_llm.requests[-1]
    texts = user_texts(last)
    assert any(t.endswith("My lucky number is 7.") for t in texts) and texts[-1].endswith("What was my number?")
    assert {"role": "assistant", "content": "Noted: your number is 7."} in last["messages"]


def test_client_side_tool_round_trip(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy) -> None:
    # The shell computes 6*7: the answer can only come from Letta Code having run the command.
    command = {"cmd": "echo tool-ran-$((6*7))", "description": "Print a number"}
    mock_llm.script(Reply.tool_call("exec_command", command), Reply.text("The command printed 42."))
    out = new_agent_turn(cli, "Run the command")
    assert out["result"] == "The command printed 42."
    assert len(mock_llm.requests) == 2
    (returned,) = tool_texts(mock_llm.requests[1])
    assert "tool-ran-42" in returned
    sends = proxy.find("POST", f"/v1/conversations/{out['conversation_id']}/messages")
    assert len(sends) == 2
    (approval,) = sends[1].body["messages"]
    assert approval["type"] == "approval"
    (item,) = approval["approvals"]
    assert item["type"] == "tool" and item["status"] == "success" and "tool-ran-42" in json.dumps(item["tool_return"])


def test_client_tool_beside_a_server_tool_in_one_response(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy) -> None:
    # The gated client call comes first: its fragments were labelled with another id than its stored request, and
    # the whole request sent again at the step's end made Letta Code double the arguments it had gathered.
    shell = Call("exec_command", {"cmd": "echo tool-ran-$((6*7))", "description": "Print a number"})
    mock_llm.script(Reply.tool_calls(shell, Call("web_search", {"query": "memlet"})), Reply.text("Both ran."))
    out = new_agent_turn(cli, "Run both")
    assert out["result"] == "Both ran."
    sends = proxy.find("POST", f"/v1/conversations/{out['conversation_id']}/messages")
    (item,) = sends[1].body["messages"][0]["approvals"]
    assert item["type"] == "tool" and item["status"] == "success" and "tool-ran-42" in json.dumps(item["tool_return"])
    returned = tool_texts(mock_llm.requests[1])
    assert len(returned) == 2 and "tool-ran-42" in returned[0]  # the shell's output, then web_search's answer


def test_a_stale_pending_approval_is_closed_before_the_turn(
    cli: LettaCode, mock_llm: MockLLM, proxy: Proxy, http: Any
) -> None:
    # An earlier client stopped while its tool ran: the conversation still waits for that call's result.
    agent = http.post("/v1/agents/", json={"model": MODEL, "embedding": "openai/text-embedding-3-small"}).json()
    conversation = http.post("/v1/conversations/", params={"agent_id": agent["id"]}, json={}).json()["id"]
    shell = {"name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}
    mock_llm.script(Reply.tool_call("exec_command", {"cmd": "sleep 600"}), Reply.text("Back on track."))
    body = {"messages": [{"role": "user", "content": "Wait"}], "streaming": False, "client_tools": [shell]}
    pending = http.post(f"/v1/conversations/{conversation}/messages", json=body).json()["messages"]
    assert [m["message_type"] for m in pending] == ["approval_request_message"]
    result = cli.run("-p", "Carry on", "--conversation", conversation, "--output-format", "json", "--yolo")
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.json()["result"] == "Back on track."
    (send,) = proxy.find("POST", f"/v1/conversations/{conversation}/messages")
    denial, user = send.body["messages"]
    assert denial["approvals"][0]["approve"] is False and user["role"] == "user"
    (closed,) = tool_texts(mock_llm.requests[-1])
    assert "denied" in closed and user_texts(mock_llm.requests[-1])[-1].endswith("Carry on")


def test_default_conversation(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy, http: Any) -> None:
    mock_llm.script(Reply.text("first"), Reply.text("In the default thread."))
    agent_id = new_agent_turn(cli, "Start")["agent_id"]
    result = cli.run("-p", "Which thread?", "--agent", agent_id, "--conv", "default", "--output-format", "json")
    assert result.returncode == 0, result.stderr + result.stdout
    out = result.json()
    assert out["result"] == "In the default thread."
    (send,) = proxy.find("POST", "/v1/conversations/default/messages")
    assert send.status == 200 and send.body["agent_id"] == agent_id
    # The default thread is the agent's own history, without the other conversation's turn.
    texts = user_texts(mock_llm.requests[-1])
    assert texts[-1].endswith("Which thread?") and not any(t.endswith("Start") for t in texts)
    history = http.get(f"/v1/agents/{agent_id}/messages", params={"limit": 50}).json()
    assert any(m.get("content") == "In the default thread." for m in history)


def test_a_conversation_model_set_and_shown(cli: LettaCode, mock_llm: MockLLM, http: Any) -> None:
    agent = http.post("/v1/agents/", json={"model": MODEL, "embedding": "openai/text-embedding-3-small"}).json()
    conversation = http.post("/v1/conversations/", params={"agent_id": agent["id"]}, json={}).json()["id"]
    assert cli.run("model", "set", "openai/gpt-4o", "--conversation", conversation).returncode == 0
    shown = cli.run("model", "get", "--conversation", conversation)
    assert shown.returncode == 0, shown.stderr
    # The settings as Letta shows them: every default filled in, not only the fields Letta Code sent.
    settings = shown.json()["model_settings"]
    assert settings["provider_type"] == "openai" and settings["max_output_tokens"] == 16384
    assert settings["temperature"] == 0.7 and settings["reasoning"] == {"reasoning_effort": "high"}
    mock_llm.script(Reply.text("From the bigger model."))
    result = cli.run("-p", "Hi", "--conversation", conversation, "--output-format", "json", "--yolo")
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.json()["result"] == "From the bigger model." and mock_llm.requests[-1]["model"] == "gpt-4o"


def test_a_cut_stream_is_resumed_to_the_whole_answer(cli: LettaCode, mock_llm: MockLLM, proxy: Proxy) -> None:
    answer = " ".join(f"word{i}" for i in range(300))
    mock_llm.script(Reply.text(answer))
    proxy.cut_next("/messages", after_bytes=3000)  # the turn's stream drops after its first token chunks
    out = new_agent_turn(cli, "Tell me a long story")
    assert proxy.cut_done == 1
    assert out["result"] == answer
    (resume, *_) = proxy.find("POST", "/stream")
    assert resume.path.startswith("/v1/runs/run-") or resume.path.startswith("/v1/conversations/")
    assert resume.body["starting_after"] > 0  # from where the cut left it, not from the start
    assert len(mock_llm.requests) == 1  # the run went on; nothing was asked twice


def test_stream_json_output(cli: LettaCode, mock_llm: MockLLM) -> None:
    mock_llm.script(Reply.text("Streaming works fine."))
    result = cli.run("-p", "Stream it", "--new-agent", "-m", MODEL, "--output-format", "stream-json", "--yolo")
    assert result.returncode == 0, result.stderr + result.stdout
    events = result.events()
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init"
    pieces = [e for e in events if e.get("message_type") == "assistant_message"]
    assert len(pieces) > 1  # token by token, as memlet streamed them
    assert "".join(str(e["content"]) for e in pieces) == "Streaming works fine."
    assert len({e["id"] for e in pieces}) == 1  # fragments of one message
    stop = next(e for e in events if e.get("message_type") == "stop_reason")
    assert stop["stop_reason"] == "end_turn"
    assert events[-1]["type"] == "result" and events[-1]["result"] == "Streaming works fine."
