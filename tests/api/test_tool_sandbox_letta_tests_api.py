"""What Letta 0.16.8's own sandbox tests (`integration_test_tool_execution_sandbox.py`,
`integration_test_async_tool_sandbox.py`) and its `validate_function_response` tests pin down that a user or the
model can see, checked through letta-client against the live server and the mock LLM: how a custom tool's return
value reaches the model and the tool return message, what a failing or silent tool shows, and what the tool's
process sees (warnings, environment)."""

import json
from typing import Any

import pytest
from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def agent_with(client: Letta, source: str, **agent: Any) -> Any:
    tool = client.tools.upsert(source_code=source)
    created = client.agents.create(model=MODEL, embedding=EMBEDDING, include_base_tools=False, **agent)
    client.agents.tools.attach(tool.id, agent_id=created.id)
    return created


def call(client: Letta, mock_llm: MockLLM, agent_id: str, name: str, args: dict[str, Any]) -> tuple[Any, Any]:
    """Have the model call `name`; the response's tool return message and the packed return the model reads next."""
    mock_llm.reset()
    mock_llm.script(Reply.tool_call(name, args), Reply.text("ok"))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "go"}])
    returned = next(m for m in response.messages if m.message_type == "tool_return_message")
    sent = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    return returned, json.loads(sent)


OBJECTS = '''
def make_objects(kind: str):
    """Return a structured object.

    Args:
        kind: dataclass or model.
    """
    import dataclasses
    import datetime

    import pydantic

    when = datetime.datetime(2024, 5, 6, 7, 8, 9)

    @dataclasses.dataclass
    class Point:
        x: int
        when: datetime.datetime

    class Reading(pydantic.BaseModel):
        value: float
        when: datetime.datetime

    return Point(3, when) if kind == "dataclass" else Reading(value=1.5, when=when)
'''


class TestReturnedObjects:
    """Letta hands a tool's return over through pydantic's Python-mode dump and `json.dumps(default=str)`: a
    dataclass or a pydantic model reaches the model as a JSON object, with `str()` of a datetime in it."""

    @pytest.mark.parametrize(
        ("kind", "expected"),
        [
            ("dataclass", {"x": 3, "when": "2024-05-06 07:08:09"}),
            ("model", {"value": 1.5, "when": "2024-05-06 07:08:09"}),
        ],
    )
    def test_a_dataclass_or_model_is_an_object_for_the_model(
        self, client: Letta, mock_llm: MockLLM, kind: str, expected: dict[str, Any]
    ) -> None:
        agent = agent_with(client, OBJECTS)
        returned, sent = call(client, mock_llm, agent.id, "make_objects", {"kind": kind})
        assert returned.status == "success"
        assert sent["message"] == expected
        assert returned.tool_return == str(expected)  # Letta's `str()` of the unpacked message


WARN = '''
def warn_hello_world() -> str:
    """Warn, then return a greeting."""
    import subprocess
    import sys
    import warnings

    warnings.warn("Hello World")
    subprocess.run([sys.executable, "-c", "import warnings; warnings.warn('from a child')"], check=True)
    return "Hello World"
'''


class TestWarnings:
    """Letta runs tools with PYTHONWARNINGS=ignore (its `..._with_venv_and_warnings_does_not_error` test): a
    warning is neither an error nor output, for the tool and for Python processes it starts."""

    def test_a_warning_leaves_stderr_empty(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = agent_with(client, WARN)
        returned, sent = call(client, mock_llm, agent.id, "warn_hello_world", {})
        assert (returned.status, returned.tool_return, sent["message"]) == ("success", "Hello World", "Hello World")
        assert returned.stderr == []


READ_ENV = '''
def read_env(name: str) -> str:
    """Read an environment variable.

    Args:
        name: The variable name.
    """
    import os

    return os.environ.get(name, "missing")
'''


class TestEnvironment:
    """What a tool's environment holds (Letta's `..._per_agent_env` tests): the agent's secrets, the project as
    PROJECT_ID under them, and the ids Letta sets over them."""

    def seen(self, client: Letta, agent_id: str, *names: str) -> dict[str, Any]:
        run = client.agents.tools.run
        return {name: run(agent_id=agent_id, tool_name="read_env", args={"name": name}).func_return for name in names}

    def test_the_project_is_project_id_under_the_secrets(self, client: Letta) -> None:
        plain = agent_with(client, READ_ENV, project_id="project-one")
        assert self.seen(client, plain.id, "PROJECT_ID", "LETTA_PROJECT_ID") == {
            "PROJECT_ID": "project-one",
            "LETTA_PROJECT_ID": "project-one",
        }
        secrets = {"PROJECT_ID": "from-secret", "LETTA_AGENT_ID": "from-secret", "TOKEN": "t0k3n"}
        shadowed = agent_with(client, READ_ENV, project_id="project-one", secrets=secrets)
        assert self.seen(client, shadowed.id, "PROJECT_ID", "LETTA_AGENT_ID", "TOKEN") == {
            "PROJECT_ID": "from-secret",
            "LETTA_AGENT_ID": shadowed.id,
            "TOKEN": "t0k3n",
        }
        without = agent_with(client, READ_ENV)
        assert self.seen(client, without.id, "PROJECT_ID") == {"PROJECT_ID": "missing"}


SILENT = '''
def add(x: int, y: int) -> int:
    """Add two integers.

    Args:
        x: The first integer.
        y: The second integer.
    """
    return x + y
'''


class TestOutputStreams:
    """Letta's sandbox result always holds `stdout` and `stderr` as lists (empty when the tool printed nothing), and
    the tool return message carries them as they are; tools run in the server have none."""

    def test_a_silent_tool_has_empty_lists(self, client: Letta, mock_llm: MockLLM, http: Any) -> None:
        agent = agent_with(client, SILENT)
        returned, sent = call(client, mock_llm, agent.id, "add", {"x": 10, "y": 5})
        assert (returned.status, returned.tool_return, sent["message"]) == ("success", "15", "15")
        assert (returned.stdout, returned.stderr) == ([], [])
        assert (returned.tool_returns[0].stdout, returned.tool_returns[0].stderr) == ([], [])
        listed = http.get(f"/v1/agents/{agent.id}/messages", params={"limit": 10}).json()
        stored = next(m for m in listed if m["message_type"] == "tool_return_message")
        assert (stored["stdout"], stored["stderr"]) == ([], [])
        ran = client.agents.tools.run(agent_id=agent.id, tool_name="add", args={"x": 1, "y": 2})
        assert (ran.func_return, ran.stdout, ran.stderr) == (3, [], [])

    def test_a_built_in_tool_has_none(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}), Reply.text("ok"))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
        returned = next(m for m in response.messages if m.message_type == "tool_return_message")
        assert returned.status == "success"
        assert (returned.stdout, returned.stderr) == (None, None)


RAISES = '''
def fail(kind: str) -> str:
    """Fail in some way.

    Args:
        kind: plain, custom, lines or bare.
    """

    class QuotaExceeded(Exception):
        pass

    print("Going to error now")
    if kind == "custom":
        raise QuotaExceeded("over quota")
    if kind == "lines":
        raise ValueError("first line\\nsecond line\\nthird line")
    if kind == "bare":
        raise ValueError()
    raise ZeroDivisionError("This is an intentionally weird division!")
'''


class TestErrors:
    """A tool's exception: the model reads `Error executing function <name>: <type>: <message>`, the tool return
    message shows it with status "error", the prints in stdout and the traceback in stderr (Letta's
    `..._with_venv_errors` and `..._async_error_handling` tests)."""

    def test_the_exception_reaches_the_model_and_the_user(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = agent_with(client, RAISES)
        returned, sent = call(client, mock_llm, agent.id, "fail", {"kind": "plain"})
        text = "Error executing function fail: ZeroDivisionError: This is an intentionally weird division!"
        assert (sent["status"], sent["message"]) == ("Failed", text)
        assert (returned.status, returned.tool_return) == ("error", text)
        assert returned.stdout == ["Going to error now\n"]
        assert "ZeroDivisionError: This is an intentionally weird division!" in returned.stderr[0]

    @pytest.mark.parametrize(
        ("kind", "text"),
        [
            ("custom", "QuotaExceeded: over quota"),
            ("lines", "ValueError: first line\nsecond line\nthird line"),
            ("bare", "ValueError: "),
        ],
    )
    def test_every_exception_keeps_its_type_and_whole_message(
        self, client: Letta, mock_llm: MockLLM, kind: str, text: str
    ) -> None:
        # Letta read these back from the last lines of the traceback and lost them ("Error executing function
        # fail: : "); memlet keeps them (README, compatibility notes).
        agent = agent_with(client, RAISES)
        returned, sent = call(client, mock_llm, agent.id, "fail", {"kind": kind})
        assert (sent["status"], sent["message"]) == ("Failed", f"Error executing function fail: {text}")
        assert returned.tool_return == sent["message"]


MEMORY_CLEAR = '''
def memory_clear(label: str, agent_id: str):
    """Clear a memory block through the Letta client every tool finds in scope.

    Args:
        label: The label of the memory block to clear.
        agent_id: The agent's ID (injected by the server).
    """
    if not client:
        return f"no client for {agent_id}"
    block = client.agents.blocks.retrieve(label, agent_id=agent_id)
    client.agents.blocks.update(label, agent_id=agent_id, value="")
    return f"SUCCESS: Cleared block '{label}' (was {len(block.value)} chars, now empty)"
'''
CLEAR_SCHEMA = {
    "name": "memory_clear",
    "description": "Clear a memory block by setting its value to empty string",
    "parameters": {
        "type": "object",
        "properties": {"label": {"type": "string", "description": "The label of the memory block to clear"}},
        "required": ["label"],
    },
}


class TestInjection:
    """Letta's `test_tool_with_client_injection` / `..._with_client_injection`: a tool with an `agent_id` parameter
    its schema leaves out gets the calling agent's id, and every tool finds a global `client`, a letta-client
    `Letta` when the agent's secrets hold LETTA_API_KEY (and LETTA_BASE_URL), else None."""

    def agent(self, client: Letta, **agent: Any) -> Any:
        tool = client.tools.upsert(source_code=MEMORY_CLEAR, json_schema=CLEAR_SCHEMA)
        block = {"label": "test_block", "value": "Initial test content that should be cleared"}
        return client.agents.create(
            model=MODEL,
            embedding=EMBEDDING,
            memory_blocks=[block],
            tool_ids=[tool.id],
            include_base_tools=False,
            **agent,
        )

    def test_without_a_key_client_is_none_and_agent_id_is_injected(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = self.agent(client)
        returned, sent = call(client, mock_llm, agent.id, "memory_clear", {"label": "test_block"})
        assert (returned.status, sent["message"]) == ("success", f"no client for {agent.id}")

    def test_with_a_key_the_tool_calls_the_server_back(self, client: Letta, mock_llm: MockLLM, server: Any) -> None:
        agent = self.agent(client, secrets={"LETTA_API_KEY": "any", "LETTA_BASE_URL": server.base_url})
        returned, sent = call(client, mock_llm, agent.id, "memory_clear", {"label": "test_block"})
        assert returned.status == "success", returned.stderr
        assert sent["message"] == "SUCCESS: Cleared block 'test_block' (was 43 chars, now empty)"
        assert client.agents.blocks.retrieve("test_block", agent_id=agent.id).value == ""


ASYNC_CLEAR = '''
async def async_clear_memory(agent_state: "AgentState"):
    """Clear the core memory."""
    import asyncio

    await asyncio.sleep(0.1)
    agent_state.memory.get_block("human").value = ""
    agent_state.memory.get_block("persona").value = ""
'''


class TestStatefulTools:
    """Letta's `..._stateful_tool` / `..._async_with_agent_state` tests: a tool (async here) that takes `agent_state`
    and empties blocks returns None (the model reads "None") and the emptied blocks are kept."""

    def test_an_async_tool_empties_the_blocks(self, client: Letta, mock_llm: MockLLM) -> None:
        blocks = [{"label": "human", "value": "username: sarah"}, {"label": "persona", "value": "This is the persona"}]
        agent = agent_with(client, ASYNC_CLEAR, memory_blocks=blocks)
        returned, sent = call(client, mock_llm, agent.id, "async_clear_memory", {})
        assert (returned.status, returned.tool_return, sent["message"]) == ("success", "None", "None")
        for label in ("human", "persona"):
            assert client.agents.blocks.retrieve(label, agent_id=agent.id).value == ""


TYPES = '''
def describe(city: str, count: int, tags: list) -> str:
    """Describe the arguments' types.

    Args:
        city: A city.
        count: A count.
        tags: Tags.
    """
    return f"{type(city).__name__}:{city!r} {type(count).__name__}:{count!r} {type(tags).__name__}:{tags!r}"
'''


class TestArgumentTypes:
    """Letta's `coerce_dict_args_by_annotations` (its `test_coerce_dict_args_*` tests): values become the annotated
    types, text parsed first; a number sent for a `str` parameter arrives as its text."""

    def test_values_arrive_as_the_annotated_types(self, client: Letta, mock_llm: MockLLM) -> None:
        agent = agent_with(client, TYPES)
        _, sent = call(client, mock_llm, agent.id, "describe", {"city": 10115, "count": "42", "tags": "[1, 2, 3]"})
        assert sent["message"] == "str:'10115' int:42 list:[1, 2, 3]"
        _, sent = call(client, mock_llm, agent.id, "describe", {"city": '{"a": 1}', "count": 7, "tags": ["x"]})
        assert sent["message"] == """str:'{"a": 1}' int:7 list:['x']"""  # text for a str stays as sent


COWSAY = '''
def cowsay() -> str:
    """Print the secret word with the cowsay package."""
    import os

    import cowsay

    cowsay.cow(os.getenv("secret_word"))
'''


class TestPipRequirements:
    """Letta's default local sandbox (no venv) stores a tool's `pip_requirements` without installing them: a tool
    importing a package the server's Python lacks fails with its ModuleNotFoundError (Letta's
    `..._pip_installs_with_update`, before the venv is configured)."""

    def test_requirements_are_not_installed(self, client: Letta, mock_llm: MockLLM) -> None:
        tool = client.tools.upsert(source_code=COWSAY, pip_requirements=[{"name": "cowsay"}])
        assert [r.name for r in tool.pip_requirements or []] == ["cowsay"]
        agent = client.agents.create(model=MODEL, embedding=EMBEDDING, tool_ids=[tool.id], include_base_tools=False)
        returned, sent = call(client, mock_llm, agent.id, "cowsay", {})
        text = "Error executing function cowsay: ModuleNotFoundError: No module named 'cowsay'"
        assert (returned.status, sent["message"]) == ("error", text)
        assert returned.stdout == []
        assert "No module named 'cowsay'" in returned.stderr[0]


LONG = '''
def long_text(n: int) -> str:
    """Return n characters.

    Args:
        n: How many.
    """
    return "y" * n
'''


class TestRunFromSource:
    """`POST /v1/tools/run` runs a tool with Letta's default limit (50000 characters): a longer return comes back
    whole, with the note Letta's execution manager appends."""

    def test_a_return_past_the_default_limit_is_whole_with_the_note(self, http: Any) -> None:
        def run(n: int) -> Any:
            response = http.post("/v1/tools/run", json={"source_code": LONG, "args": {"n": n}})
            assert response.status_code == 200, response.text
            return response.json()

        note = "... [NOTE: function output was truncated since it exceeded the character limit: 60000 > 50000]"
        ran = run(60000)
        assert (ran["status"], ran["tool_return"]) == ("success", "y" * 60000 + note)
        assert run(50000)["tool_return"] == "y" * 50000
