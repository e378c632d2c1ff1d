"""Run a user-defined Python tool (a Letta custom tool) in a separate, limited process.

Each call starts `python -I _sandbox_runner.py` in its own process group, in a fresh temporary directory, with a
clean environment (a minimal PATH/LANG plus the variables the caller passes; never the server's own). The source
and the arguments go in as JSON on stdin, prints come back on stdout/stderr, and the result comes back on a
private pipe. A wall-clock timeout kills the whole group; RLIMIT_AS caps memory.

The result follows Letta's `ToolExecutionResult`: `status`, `func_return` (text the model sees, truncated at
`return_char_limit` with Letta's notice, or `Error executing function <name>: <ExcType>: <msg>`), and `stdout` /
`stderr` as lists holding at most one string each.
"""

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

RUNNER_PATH = Path(__file__).with_name("_sandbox_runner.py")
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "NO_COLOR": "1",
}
# Letta caps error texts at 1000 characters (MAX_ERROR_MESSAGE_CHAR_LIMIT).
MAX_ERROR_CHARS = 1000
# Captured output is kept in server memory; a tool printing in a loop must not exhaust it.
MAX_STREAM_BYTES = 1_000_000
MAX_RESULT_BYTES = 8_000_000
_READ_CHUNK = 65536
# After the tool exits, background processes that escaped the group could hold the pipes open; wait this long.
_DRAIN_GRACE_S = 0.5


@dataclass
class SandboxResult:
    """Outcome of one sandboxed tool call, shaped like Letta's ToolExecutionResult."""

    status: Literal["success", "error"]
    func_return: str | None
    stdout: list[str]
    stderr: list[str]
    duration_ms: float
    # The return value as JSON data (dicts stay dicts), for callers that need Letta's object form, e.g. the
    # packed tool message or `str(func_return)` of POST /v1/tools/run. None on error or above ~1 MB.
    value: Any = field(default=None)


def friendly_error(function_name: str, exc_type: str, exc_message: str) -> str:
    """Letta's model-visible text for a failed tool call, capped at 1000 characters."""
    return f"Error executing function {function_name}: {exc_type}: {exc_message}"[:MAX_ERROR_CHARS]


async def run_tool(
    source_code: str,
    function_name: str,
    args: dict[str, Any],
    *,
    env: dict[str, str] | None = None,
    timeout_s: float = 60.0,
    memory_mb: int = 512,
    return_char_limit: int = 50000,
) -> SandboxResult:
    """Run `function_name` from `source_code` with keyword `args` in a sandboxed subprocess.

    Never raises for tool failures: exceptions, syntax errors, a missing function, a timeout or a crash all come
    back as `status="error"`. `env` holds the agent's secrets / tool variables and is the only environment the
    tool sees besides PATH and LANG. `memory_mb <= 0` disables the memory cap; `return_char_limit=0` disables
    truncation.
    """
    started = time.perf_counter()
    payload = json.dumps(
        {
            "source_code": source_code,
            "function_name": function_name,
            "args": args,
            "memory_mb": memory_mb,
            "return_char_limit": return_char_limit,
        },
        ensure_ascii=False,
    ).encode("utf-8", errors="backslashreplace")
    workdir = tempfile.mkdtemp(prefix="memlet-tool-")
    try:
        outcome = await _execute(payload, _child_env(env, workdir), workdir, timeout_s)
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
    return _build_result(function_name, outcome, timeout_s, (time.perf_counter() - started) * 1000)


def _child_env(extra: dict[str, str] | None, workdir: str) -> dict[str, str]:
    env = {**BASE_ENV, "HOME": workdir, "TMPDIR": workdir}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return env


@dataclass
class _Outcome:
    returncode: int | None
    timed_out: bool
    stdout: bytes
    stderr: bytes
    result: bytes


async def _execute(payload: bytes, env: dict[str, str], workdir: str, timeout_s: float) -> _Outcome:
    """Spawn the runner, feed it, collect its three outputs, and always kill its process group at the end."""
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(RUNNER_PATH),
            str(write_fd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=workdir,
            start_new_session=True,
            pass_fds=(write_fd,),
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child holds its own copy; ours would keep the pipe from ever reaching EOF

    loop = asyncio.get_running_loop()
    result_reader = asyncio.StreamReader(limit=_READ_CHUNK)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(result_reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    # All three are PIPEs, so asyncio always creates the streams.
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    readers = [
        asyncio.create_task(_drain(proc.stdout, MAX_STREAM_BYTES)),
        asyncio.create_task(_drain(proc.stderr, MAX_STREAM_BYTES)),
        asyncio.create_task(_drain(result_reader, MAX_RESULT_BYTES)),
    ]
    feeder = asyncio.create_task(_feed(proc.stdin, payload))
    exited = asyncio.create_task(proc.wait())
    try:
        # proc.wait() also waits for stdout/stderr to close, which a daemon the tool spawned may hold open;
        # the end of the result channel shows just as well that the runner is done.
        done, _ = await asyncio.wait([exited, readers[2]], timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        # A runner that exited in time is no timeout even if a forked child still holds the channel open.
        timed_out = not done and proc.returncode is None
    finally:
        # Also on success and on cancellation: nothing the tool started may outlive the call.
        _kill_group(proc.pid)
        feeder.cancel()
        _, pending = await asyncio.wait([exited, *readers], timeout=_DRAIN_GRACE_S)
        for task in pending:
            task.cancel()
        transport.close()
    stdout, stderr, result = (t.result() if t.done() and not t.cancelled() else b"" for t in readers)
    return _Outcome(proc.returncode, timed_out, stdout, stderr, result)


async def _feed(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    # A child that dies before reading everything closes the pipe; that is reported through its exit instead.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
        stdin.close()


async def _drain(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Read a stream to EOF, keeping the first `cap` bytes so a chatty tool cannot block on a full pipe."""
    kept = bytearray()
    while chunk := await stream.read(_READ_CHUNK):
        if len(kept) < cap:
            kept.extend(chunk[: cap - len(kept)])
    return bytes(kept)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _decode(data: bytes) -> str:
    # Postgres TEXT rejects NUL, so it never leaves the sandbox.
    return data.decode("utf-8", errors="replace").replace("\x00", "")


def _clean(value: Any) -> Any:
    """Drop what Postgres cannot store (NUL, lone surrogates) from every string in a JSON value."""
    if isinstance(value, str):
        return value.replace("\x00", "").encode("utf-8", errors="replace").decode("utf-8")
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def _build_result(function_name: str, outcome: _Outcome, timeout_s: float, duration_ms: float) -> SandboxResult:
    stdout = [text] if (text := _decode(outcome.stdout)) else []
    stderr_text = _decode(outcome.stderr)

    def error(exc_type: str, message: str, note: str | None = None) -> SandboxResult:
        err = stderr_text + (f"\n{note}" if stderr_text and note else note or "")
        return SandboxResult(
            "error", friendly_error(function_name, exc_type, message), stdout, [err] if err else [], duration_ms
        )

    if outcome.timed_out:
        message = f"Executing tool {function_name} timed out after {timeout_s:g} seconds."
        return error("TimeoutError", message, message)
    try:
        report = json.loads(outcome.result.decode("utf-8", errors="replace"))
    except ValueError:
        note = f"tool process exited with code {outcome.returncode} without returning a result"
        return error("RuntimeError", note, note)
    if not report.get("ok"):
        return error(_clean(str(report.get("exc_type", ""))), _clean(str(report.get("exc_message", ""))))
    stderr = [stderr_text] if stderr_text else []
    text = _clean(str(report.get("text", "")))
    return SandboxResult("success", text, stdout, stderr, duration_ms, _clean(report.get("value")))
