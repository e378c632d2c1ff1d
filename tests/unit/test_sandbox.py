"""The user-tool sandbox: results, errors, limits and isolation as the model and the API see them."""

import asyncio
import json
import os
import time
import uuid
from pathlib import Path

import pytest

from memlet.tool_exec.sandbox import run_tool

ECHO = '''
def echo(value):
    """Return the argument unchanged."""
    return value
'''


class TestReturnValues:
    async def test_dict_return_is_json_text_and_value(self) -> None:
        source = "def f(city: str):\n    return {'city': city, 'temp': 21, 'ok': True}\n"
        result = await run_tool(source, "f", {"city": "Zürich"})
        assert result.status == "success"
        assert json.loads(result.func_return or "") == {"city": "Zürich", "temp": 21, "ok": True}
        assert "Zürich" in (result.func_return or "")  # not escaped to \\u00fc
        assert result.value == {"city": "Zürich", "temp": 21, "ok": True}
        assert result.stdout == []
        assert result.stderr == []
        assert result.duration_ms > 0

    async def test_str_return_unchanged(self) -> None:
        result = await run_tool(ECHO, "echo", {"value": "hello world"})
        assert (result.status, result.func_return, result.value) == ("success", "hello world", "hello world")

    async def test_int_return_stringified(self) -> None:
        result = await run_tool("def add(a: int, b: int) -> int:\n    return a + b\n", "add", {"a": 2, "b": 3})
        assert (result.status, result.func_return, result.value) == ("success", "5", 5)

    async def test_none_and_list_use_python_str(self) -> None:
        none = await run_tool("def f():\n    return None\n", "f", {})
        listed = await run_tool("def f():\n    return [1, 'a', (2, 3)]\n", "f", {})
        assert none.func_return == "None"
        # Letta round-trips through JSON (tuple -> list) and then calls str() on non-dict values.
        assert listed.func_return == "[1, 'a', [2, 3]]"

    async def test_text_postgres_cannot_store_is_dropped(self) -> None:
        result = await run_tool("def f():\n    return {'k': 'a\\x00b\\ud800c'}\n", "f", {})
        assert result.value == {"k": "ab?c"}
        assert "\x00" not in (result.func_return or "")
        (result.func_return or "").encode("utf-8")  # no lone surrogate left

    async def test_non_json_serializable_return_becomes_str(self) -> None:
        source = (
            "class Point:\n"
            "    def __str__(self):\n"
            "        return 'Point(1, 2)'\n"
            "def f():\n"
            "    return {'p': Point(), 's': {1}}\n"
        )
        result = await run_tool(source, "f", {})
        assert result.status == "success"
        assert result.value == {"p": "Point(1, 2)", "s": "{1}"}

    async def test_async_tool_and_typing_names_available(self) -> None:
        # Letta's generated script imports typing's names, so tools may use Optional without importing it.
        source = "async def f(x: Optional[int] = None) -> str:\n    return f'got {x}'\n"
        result = await run_tool(source, "f", {"x": 7})
        assert (result.status, result.func_return) == ("success", "got 7")

    async def test_agent_state_parameter_receives_none(self) -> None:
        source = "def f(agent_state, n: int):\n    return f'{agent_state} {n}'\n"
        result = await run_tool(source, "f", {"n": 1})
        assert result.func_return == "None 1"

    @pytest.mark.parametrize(
        "source",
        [
            "def f(n: int, *, agent_state=None):\n    return f'{agent_state} {n}'\n",  # keyword-only
            (  # decorated: its parameters are the wrapped function's
                "import functools\n"
                "def logged(fn):\n"
                "    @functools.wraps(fn)\n"
                "    def inner(*args, **kwargs):\n"
                "        return fn(*args, **kwargs)\n"
                "    return inner\n"
                "@logged\n"
                "def f(agent_state, n: int):\n"
                "    return f'{agent_state} {n}'\n"
            ),
            (  # a callable object
                "class F:\n    def __call__(self, agent_state, n: int):\n        return f'{agent_state} {n}'\nf = F()\n"
            ),
        ],
    )
    async def test_agent_state_is_found_however_the_tool_is_defined(self, source: str) -> None:
        result = await run_tool(source, "f", {"n": 1})
        assert (result.status, result.func_return) == ("success", "None 1")

    async def test_a_plain_tool_starts_without_asyncio_or_inspect(self) -> None:
        # Importing them was most of a call's start-up; only a coroutine tool (or an unusual callable) needs them.
        source = "import sys\ndef f():\n    return [m for m in ('asyncio', 'inspect') if m in sys.modules]\n"
        result = await run_tool(source, "f", {})
        assert (result.status, result.value) == ("success", [])

    async def test_return_truncated_with_letta_notice(self) -> None:
        result = await run_tool(ECHO, "echo", {"value": "x" * 120}, return_char_limit=100)
        assert result.status == "success"
        assert result.func_return == (
            "x" * 100 + "... [NOTE: function output was truncated since it exceeded the character limit (120 > 100)]"
        )

    async def test_zero_limit_disables_truncation(self) -> None:
        result = await run_tool(ECHO, "echo", {"value": "y" * 70000}, return_char_limit=0)
        assert result.func_return == "y" * 70000


class TestOutputCapture:
    async def test_print_goes_to_stdout_not_return(self) -> None:
        source = (
            "import sys\n"
            "def f():\n"
            "    print('hello from tool')\n"
            "    print('{\"ok\": false}')\n"
            "    print('warn', file=sys.stderr)\n"
            "    return 'done'\n"
        )
        result = await run_tool(source, "f", {})
        assert result.status == "success"
        assert result.func_return == "done"
        assert result.stdout == ['hello from tool\n{"ok": false}\n']
        assert result.stderr == ["warn\n"]

    async def test_output_of_child_processes_is_captured(self) -> None:
        source = "import subprocess\ndef f():\n    subprocess.run(['echo', 'from child'])\n    return 1\n"
        result = await run_tool(source, "f", {})
        assert result.stdout == ["from child\n"]
        assert result.func_return == "1"


class TestErrors:
    async def test_exception_is_error_result_with_traceback(self) -> None:
        source = "def f(x):\n    raise ValueError(f'bad value {x}')\n"
        result = await run_tool(source, "f", {"x": 3})
        assert result.status == "error"
        assert result.func_return == "Error executing function f: ValueError: bad value 3"
        assert result.value is None
        assert len(result.stderr) == 1
        assert "Traceback" in result.stderr[0]
        assert "raise ValueError(f'bad value {x}')" in result.stderr[0]  # the tool's own source line
        assert "_sandbox_runner" not in result.stderr[0]

    async def test_syntax_error_in_source(self) -> None:
        result = await run_tool("def f(:\n    return 1\n", "f", {})
        assert result.status == "error"
        assert (result.func_return or "").startswith("Error executing function f: SyntaxError: ")

    async def test_missing_function(self) -> None:
        result = await run_tool(ECHO, "nope", {})
        assert result.status == "error"
        assert result.func_return == "Error executing function nope: NameError: name 'nope' is not defined"

    async def test_wrong_arguments(self) -> None:
        result = await run_tool(ECHO, "echo", {"other": 1})
        assert result.status == "error"
        assert (result.func_return or "").startswith("Error executing function echo: TypeError: ")

    async def test_sys_exit_is_an_error(self) -> None:
        result = await run_tool("import sys\ndef f():\n    sys.exit(3)\n", "f", {})
        assert result.status == "error"
        assert result.func_return == "Error executing function f: SystemExit: 3"

    async def test_hard_exit_without_result(self) -> None:
        result = await run_tool("import os\ndef f():\n    os._exit(0)\n", "f", {})
        assert result.status == "error"
        assert "without returning a result" in (result.func_return or "")

    async def test_error_text_capped_at_1000_chars(self) -> None:
        result = await run_tool("def f():\n    raise RuntimeError('e' * 5000)\n", "f", {})
        assert len(result.func_return or "") == 1000


class TestLimits:
    async def test_timeout_kills_process_quickly(self) -> None:
        source = "import time\ndef f():\n    print('started', flush=True)\n    time.sleep(30)\n"
        started = time.monotonic()
        result = await run_tool(source, "f", {}, timeout_s=1.0)
        assert time.monotonic() - started < 4
        assert result.status == "error"
        assert (
            result.func_return
            == "Error executing function f: TimeoutError: Executing tool f timed out after 1.0 seconds."
        )
        assert result.stdout == ["started\n"]

    async def test_timeout_kills_background_children(self) -> None:
        # A grandchild of the tool must die with it, not keep running after the call.
        marker = f"memlet-bg-{uuid.uuid4().hex}"
        source = (
            "import subprocess, sys, time\n"
            "def f(marker):\n"
            "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', marker])\n"
            "    print('spawned', flush=True)\n"
            "    time.sleep(30)\n"
        )
        result = await run_tool(source, "f", {"marker": marker}, timeout_s=2.0)
        assert result.stdout == ["spawned\n"]
        assert processes_with(marker) == []

    async def test_daemon_holding_stdout_does_not_stall_the_call(self) -> None:
        marker = f"memlet-daemon-{uuid.uuid4().hex}"
        source = (
            "import subprocess, sys\n"
            "def f(marker):\n"
            "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', marker], start_new_session=True)\n"
            "    return 'detached'\n"
        )
        started = time.monotonic()
        result = await run_tool(source, "f", {"marker": marker}, timeout_s=10.0)
        assert (result.status, result.func_return) == ("success", "detached")
        assert time.monotonic() - started < 4
        assert processes_with(marker) == []  # a new session does not escape the end of the call

    async def test_cancelling_the_call_kills_the_tool(self) -> None:
        marker = f"memlet-cancel-{uuid.uuid4().hex}"
        source = (
            "import subprocess, sys\n"
            "def f(marker):\n"
            "    subprocess.run([sys.executable, '-c', 'import time; time.sleep(30)', marker])\n"
        )
        task = asyncio.create_task(run_tool(source, "f", {"marker": marker}))
        for _ in range(300):
            if processes_with(marker):
                break
            await asyncio.sleep(0.02)
        assert processes_with(marker), "the tool never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert processes_with(marker) == []

    async def test_memory_cap(self) -> None:
        source = "def f():\n    data = bytearray(2 * 1024 ** 3)\n    return len(data)\n"
        result = await run_tool(source, "f", {})  # default cap: 512 MB
        assert result.status == "error"
        assert (result.func_return or "").startswith("Error executing function f: MemoryError")

    async def test_infinite_print_is_bounded(self) -> None:
        source = "def f():\n    for _ in range(200000):\n        print('z' * 100)\n    return 'ok'\n"
        result = await run_tool(source, "f", {})
        assert result.func_return == "ok"
        assert len(result.stdout[0]) <= 1_000_000


class TestIsolation:
    async def test_server_environment_not_visible(self, monkeypatch: pytest.MonkeyPatch) -> None:
        secret = f"sk-server-{uuid.uuid4().hex}"
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        source = (
            "import os\n"
            "def f(pid):\n"
            "    try:\n"
            "        parent = open(f'/proc/{pid}/environ').read()\n"
            "    except OSError as exc:\n"
            "        parent = type(exc).__name__\n"
            "    return {'env': dict(os.environ), 'parent': parent}\n"
        )
        result = await run_tool(source, "f", {"pid": os.getpid()}, env={"WEATHER_API_KEY": "agent-secret"})
        assert result.status == "success"
        env = result.value["env"]
        assert secret not in (result.func_return or "")
        assert sorted(env) == [
            *("HOME", "LANG", "LC_ALL", "NO_COLOR", "PATH", "PWD", "PYTHONUNBUFFERED", "PYTHONWARNINGS", "TERM"),
            *("TMPDIR", "WEATHER_API_KEY"),
        ]
        assert env["WEATHER_API_KEY"] == "agent-secret"
        # The server's own /proc entry is not there at all (own pid namespace).
        assert result.value["parent"] == "FileNotFoundError"

    async def test_scratch_files_do_not_survive_the_call(self) -> None:
        write = (
            "import os\ndef f():\n    open('scratch.txt', 'w').write('x')\n    return os.path.abspath('scratch.txt')\n"
        )
        check = "import os\ndef f(path):\n    return [os.path.exists('scratch.txt'), os.path.exists(path)]\n"
        first = await run_tool(write, "f", {})
        assert first.status == "success"
        second = await run_tool(check, "f", {"path": first.func_return})
        assert second.value == [False, False]
        assert not _exists(first.func_return or "")  # nothing left on the host either

    @pytest.mark.parametrize(
        "value",
        [
            '"); import os; ("',
            "'''; raise SystemExit; '''",
            'line one\nline "two"\n\ttab \\ backslash',
            "emoji 🎉 ümlaut 中文",
            "{{ jinja }} %s {0}",
        ],
    )
    async def test_args_arrive_intact(self, value: str) -> None:
        result = await run_tool(ECHO, "echo", {"value": value})
        assert result.status == "success"
        assert result.func_return == value

    async def test_structured_args_arrive_as_json_types(self) -> None:
        args = {"value": {"n": 1.5, "flag": False, "items": [None, "a"]}}
        result = await run_tool(ECHO, "echo", args)
        assert result.value == args["value"]


def _exists(path: str) -> bool:
    return os.path.exists(path)


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker`, zombies (dead, waiting to be reaped) excluded."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


TYPED = '''
from typing import Optional

def typed(count: int, ratio: float, flag: bool, items: list, label: str, maybe: Optional[int] = None) -> str:
    """Show what arrived."""
    return repr((count, ratio, flag, items, label, maybe))
'''


class TestArgumentTypes:
    async def test_values_are_converted_to_the_annotated_types(self) -> None:
        args = {"count": "3", "ratio": 2, "flag": "false", "items": "[1, 2]", "label": "[1, 2]"}
        result = await run_tool(TYPED, "typed", args)
        # As in Letta's sandbox; a str parameter keeps the text as sent (Letta would have made it "[1, 2]" too,
        # but from a parsed list: JSON text in a str parameter came out as Python text).
        assert result.func_return == "(3, 2.0, False, [1, 2], '[1, 2]', None)"

    async def test_one_value_that_cannot_be_converted_leaves_them_all_as_sent(self) -> None:
        args = {"count": "3", "ratio": 2, "flag": True, "items": [], "label": "x", "maybe": "4"}
        result = await run_tool(TYPED, "typed", args)  # Optional[int] is not callable: nothing is converted
        assert result.func_return == "('3', 2, True, [], 'x', '4')"
