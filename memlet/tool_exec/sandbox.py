"""Run a user-defined Python tool (a Letta custom tool) in a separate, limited process.

Each call starts `python -I _sandbox_runner.py` with a clean environment (a minimal PATH/LANG plus the variables
the caller passes; never the server's own). Where bubblewrap works (see `isolation`), the runner starts inside its
own namespaces with a read-only view of the system and nothing of the server's files, /proc or sockets; the whole
namespace dies with the call. Without it, the runner gets its own process group and temporary directory, and the
group is killed at the end. Either way the runner sets RLIMIT_AS/FSIZE/CPU and no core dumps before the tool's
code runs; a server running as root gives each call an unprivileged uid of its own (without bubblewrap only when
that uid can read the interpreter), and RLIMIT_NPROC applies wherever the call has its own uid or user namespace.
At most MEMLET_MAX_CONCURRENT_TOOLS calls run at once; the others wait for a slot, at most their timeout.

The source and the arguments go in as JSON on stdin, prints come back on stdout/stderr, and the result comes back
on a private pipe. A wall-clock timeout ends the call.

The result follows Letta's `ToolExecutionResult`: `status`, `func_return` (text the model sees, truncated at
`return_char_limit` with Letta's notice, or `Error executing function <name>: <ExcType>: <msg>`), and `stdout` /
`stderr` as lists holding at most one string each.
"""

import asyncio
import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy.engine import make_url

from memlet.config import Settings
from memlet.tool_exec.isolation import (
    SANDBOX_TMP,
    Isolation,
    IsolationChoice,
    drops_to_own_uid,
    resolve_isolation,
    sandbox_argv,
)
from memlet.tool_exec.process import Outcome, execute, kill_uid
from memlet.tool_exec.slots import claim_uid, slot_pool

BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "NO_COLOR": "1",
    # As in Letta's tool environment: no warnings on stderr, unbuffered output.
    "PYTHONWARNINGS": "ignore",
    "PYTHONUNBUFFERED": "1",
}
# Letta caps error texts at 1000 characters (MAX_ERROR_MESSAGE_CHAR_LIMIT).
MAX_ERROR_CHARS = 1000


@dataclass(frozen=True)
class SandboxPolicy:
    """How tool calls are confined; built once from the settings (`from_settings`), defaults for direct use."""

    isolation: IsolationChoice = "auto"
    network: bool = True
    max_processes: int = 64
    disk_mb: int = 256
    max_concurrent: int = 8
    uid_base: int = 2_000_000_000
    # Holds the uid locks (never visible to tools: it is the data dir).
    state_dir: Path = field(default_factory=lambda: Path("~/.memlet").expanduser())
    # Directories no tool may see even where a bound prefix contains them: the data dir, the database socket's.
    hidden: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> "SandboxPolicy":
        data_dir = settings.resolved_data_dir
        hidden = [str(data_dir)]
        if settings.pg_uri and (socket_dir := database_socket_dir(settings.pg_uri)):
            hidden.append(socket_dir)
        return cls(
            isolation=settings.tool_isolation,
            network=settings.tool_network,
            max_processes=settings.tool_max_processes,
            disk_mb=settings.tool_disk_mb,
            max_concurrent=settings.max_concurrent_tools,
            uid_base=settings.tool_uid_base,
            state_dir=data_dir,
            hidden=tuple(hidden),
        )


def database_socket_dir(pg_uri: str) -> str | None:
    """The unix-socket directory of a Postgres URI (`?host=/path`, as the embedded server uses), if any."""
    try:
        host = make_url(pg_uri.replace("postgres://", "postgresql://", 1)).query.get("host")
    except Exception:  # an unparsable URI fails later, where the engine is built
        return None
    if isinstance(host, tuple):
        host = host[0] if host else None
    return host if isinstance(host, str) and host.startswith("/") else None


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
    # {label: value} of the agent's blocks after a call that received `agent_state` (None otherwise).
    memory: dict[str, str] | None = None


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
    policy: SandboxPolicy | None = None,
    agent_state: dict[str, Any] | None = None,
    agent_id: str | None = None,
    args_json_schema: dict[str, Any] | None = None,
) -> SandboxResult:
    """Run `function_name` from `source_code` with keyword `args` in a sandboxed subprocess.

    `agent_state` (id, name, blocks...) is given to a tool that takes an `agent_state` parameter; the block
    values it leaves come back in `SandboxResult.memory`. `agent_id` (the calling agent's) goes to a tool with an
    `agent_id` parameter the arguments leave out. With an `args_json_schema`, the arguments reach the tool as
    Letta's sandbox passes them: validated into pydantic models built from that schema, whose names the tool's
    source can use.

    Never raises for tool failures: exceptions, syntax errors, a missing function, a timeout, a crash or no free
    sandbox slot all come back as `status="error"`. `env` holds the agent's secrets / tool variables and is the
    only environment the tool sees besides PATH and LANG. `memory_mb <= 0` disables the memory cap;
    `return_char_limit=0` disables truncation.
    """
    policy = policy or SandboxPolicy()
    isolation = resolve_isolation(policy.isolation)
    started = time.perf_counter()
    pool = slot_pool(policy.max_concurrent)
    if not await pool.acquire(timeout_s):
        message = f"no sandbox became free within {timeout_s:g} seconds (MEMLET_MAX_CONCURRENT_TOOLS={pool.size})"
        return _failure(function_name, "TimeoutError", message, started)
    own_uid = drops_to_own_uid(isolation)
    try:
        uid_lock = claim_uid(policy.state_dir / "sandbox-uids", policy.uid_base) if own_uid else None
    except OSError as exc:
        pool.release()
        return _failure(function_name, "RuntimeError", f"cannot reserve a sandbox uid: {exc}", started)
    if own_uid and uid_lock is None:
        pool.release()
        return _failure(function_name, "RuntimeError", "no unprivileged sandbox uid is free", started)
    uid = uid_lock[0] if uid_lock else None
    try:
        payload = _payload(source_code, function_name, args, policy, isolation, uid, timeout_s, memory_mb)
        payload["return_char_limit"] = return_char_limit
        payload["agent_state"] = agent_state
        payload["agent_id"] = agent_id
        payload["args_json_schema"] = args_json_schema or None
        outcome = await _execute_isolated(json_bytes(payload), env, isolation, policy, uid, timeout_s)
    finally:
        if uid_lock:
            os.close(uid_lock[1])
        pool.release()
    return _build_result(function_name, outcome, timeout_s, (time.perf_counter() - started) * 1000)


def json_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="backslashreplace")


def _failure(function_name: str, exc_type: str, message: str, started: float) -> SandboxResult:
    text = friendly_error(function_name, exc_type, message)
    return SandboxResult("error", text, [], [message], (time.perf_counter() - started) * 1000)


def _payload(
    source_code: str,
    function_name: str,
    args: dict[str, Any],
    policy: SandboxPolicy,
    isolation: Isolation,
    uid: int | None,
    timeout_s: float,
    memory_mb: int,
) -> dict[str, Any]:
    # RLIMIT_NPROC counts every process of the real uid: meaningful for a uid (or user namespace) of the tool's
    # own, harmful when the tool shares the server's uid and namespace.
    own_uid = isolation.mode == "bubblewrap" or uid is not None
    limits = {
        "memory_mb": memory_mb,
        "nproc": policy.max_processes if own_uid else None,
        "fsize_mb": policy.disk_mb,
        "cpu_s": math.ceil(timeout_s) + 1,
    }
    return {"source_code": source_code, "function_name": function_name, "args": args, "limits": limits, "uid": uid}


async def _execute_isolated(
    payload: bytes,
    extra_env: dict[str, str] | None,
    isolation: Isolation,
    policy: SandboxPolicy,
    uid: int | None,
    timeout_s: float,
) -> Outcome:
    if isolation.mode == "bubblewrap" and isolation.bwrap:
        prefix = sandbox_argv(isolation.bwrap, network=policy.network, disk_mb=policy.disk_mb, hidden=policy.hidden)
        env = _child_env(extra_env, SANDBOX_TMP)
        return await execute(payload, env, "/", timeout_s, bwrap_prefix=prefix)
    workdir = tempfile.mkdtemp(prefix="memlet-tool-")
    try:
        if uid is not None:
            os.chown(workdir, uid, uid)
        outcome = await execute(payload, _child_env(extra_env, workdir), workdir, timeout_s)
        if uid is not None:
            await kill_uid(uid)  # setsid/double-forked leftovers: everything this call's uid still runs
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
    return outcome


def _child_env(extra: dict[str, str] | None, home: str) -> dict[str, str]:
    env = {**BASE_ENV, "HOME": home, "TMPDIR": home}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return env


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


def _build_result(function_name: str, outcome: Outcome, timeout_s: float, duration_ms: float) -> SandboxResult:
    stdout = [text] if (text := _decode(outcome.stdout)) else []
    stderr_text = _decode(outcome.stderr)

    def error(exc_type: str, message: str, note: str | None = None) -> SandboxResult:
        err = stderr_text + (f"\n{note}" if stderr_text and note else note or "")
        return SandboxResult(
            "error", friendly_error(function_name, exc_type, message), stdout, [err] if err else [], duration_ms
        )

    if outcome.timed_out:
        # Letta's timeout setting is a float, so its message reads "after 180.0 seconds".
        message = f"Executing tool {function_name} timed out after {float(timeout_s)} seconds."
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
    memory = report.get("memory")
    memory = {str(k): _clean(str(v)) for k, v in memory.items()} if isinstance(memory, dict) else None
    return SandboxResult("success", text, stdout, stderr, duration_ms, _clean(report.get("value")), memory)
