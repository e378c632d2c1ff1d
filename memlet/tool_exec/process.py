"""The processes of one sandboxed call: spawn the runner (under bwrap or not), feed it, collect its three outputs,
and end everything it started: its process group, and under bubblewrap the whole pid namespace (its pid 1, found
through bwrap's `--info-fd` report, is killed and waited for; the kernel empties the namespace before it exits)."""

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

from memlet.tool_exec.isolation import RUNNER_MOUNT, RUNNER_PATH

# Captured output is kept in server memory; a tool printing in a loop must not exhaust it.
MAX_STREAM_BYTES = 1_000_000
MAX_RESULT_BYTES = 8_000_000
_READ_CHUNK = 65536
# After the tool exits, background processes that escaped the group could hold the pipes open; wait this long.
_DRAIN_GRACE_S = 0.5
# How long the end of a call waits for the kernel to empty the sandbox's pid namespace.
_REAP_TIMEOUT_S = 5.0


@dataclass
class Outcome:
    returncode: int | None
    timed_out: bool
    stdout: bytes
    stderr: bytes
    result: bytes


async def execute(
    payload: bytes, env: dict[str, str], cwd: str, timeout_s: float, *, bwrap_prefix: list[str] | None = None
) -> Outcome:
    """Spawn the runner, feed it, collect its outputs, and always end everything it started."""
    read_fd, write_fd = os.pipe()
    info_read, info_write = os.pipe() if bwrap_prefix else (-1, -1)
    if bwrap_prefix:
        argv = [*bwrap_prefix, "--info-fd", str(info_write), sys.executable, "-I", RUNNER_MOUNT, str(write_fd)]
    else:
        argv = [sys.executable, "-I", str(RUNNER_PATH), str(write_fd)]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
            pass_fds=(write_fd, info_write) if bwrap_prefix else (write_fd,),
        )
    except BaseException:
        for fd in (read_fd, info_read):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        # The child holds its own copies; ours would keep the pipes from ever reaching EOF.
        for fd in (write_fd, info_write):
            if fd >= 0:
                os.close(fd)

    result_pipe = _PipeDrain(read_fd, MAX_RESULT_BYTES)
    info_pipe = _PipeDrain(info_read, 4096) if bwrap_prefix else None
    # All three are PIPEs, so asyncio always creates the streams.
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    readers: list[asyncio.Future[bytes]] = [
        asyncio.create_task(_drain(proc.stdout, MAX_STREAM_BYTES)),
        asyncio.create_task(_drain(proc.stderr, MAX_STREAM_BYTES)),
        result_pipe.read,
    ]
    info = info_pipe.read if info_pipe is not None else None
    feeder = asyncio.create_task(_feed(proc.stdin, payload))
    exited: asyncio.Future[Any] = asyncio.create_task(proc.wait())
    try:
        # proc.wait() also waits for stdout/stderr to close, which a daemon the tool spawned may hold open;
        # the end of the result channel shows just as well that the runner is done.
        done, _ = await asyncio.wait([exited, readers[2]], timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        # A runner that exited in time is no timeout even if a forked child still holds the channel open.
        timed_out = not done and proc.returncode is None
    finally:
        # Also on success and on cancellation: nothing the tool started may outlive the call.
        await _end_all(proc, info)
        feeder.cancel()
        _, pending = await asyncio.wait([exited, *readers], timeout=_DRAIN_GRACE_S)
        for task in pending:
            task.cancel()
        for pipe in (result_pipe, info_pipe):
            if pipe is not None:
                pipe.close()
    stdout, stderr, result = (t.result() if t.done() and not t.cancelled() else b"" for t in readers)
    return Outcome(proc.returncode, timed_out, stdout, stderr, result)


class _PipeDrain:
    """Reads the read end of a pipe to EOF through the loop's `add_reader`, keeping its first `cap` bytes (`read`
    resolves to them), and closes the descriptor exactly once (`close`, or at EOF).

    Not `loop.connect_read_pipe`: under uvloop (uvicorn's loop) its transport closes the descriptor in libuv and
    then again through the file object it was given (MagicStack/uvloop#763). When another thread had been handed the
    same number in between (a Postgres connection, a client's socket), that second close closed it."""

    def __init__(self, fd: int, cap: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._cap = cap
        self._kept = bytearray()
        self._loop = asyncio.get_running_loop()
        self.read: asyncio.Future[bytes] = self._loop.create_future()
        self._loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, _READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if chunk:
            if len(self._kept) < self._cap:
                self._kept.extend(chunk[: self._cap - len(self._kept)])
            return
        if not self.read.done():
            self.read.set_result(bytes(self._kept))
        self.close()

    def close(self) -> None:
        """Stop reading and close the descriptor (once); a read not yet at EOF is cancelled."""
        if self._fd < 0:
            return
        self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._fd = -1
        if not self.read.done():
            self.read.cancel()


async def _end_all(proc: asyncio.subprocess.Process, info: "asyncio.Future[bytes] | None") -> None:
    """Kill the runner's group and, under bubblewrap, the namespace's pid 1; wait until the namespace is empty."""
    pidfd = await _namespace_pidfd(proc, info) if info is not None else None
    try:
        if pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        _kill_group(proc.pid)
        if pidfd is not None:
            # pid 1 of a namespace exits only after the kernel has killed and reaped everything else in it.
            await _wait_readable(pidfd, _REAP_TIMEOUT_S)
    finally:
        if pidfd is not None:
            os.close(pidfd)


async def _namespace_pidfd(proc: asyncio.subprocess.Process, info: "asyncio.Future[bytes]") -> int | None:
    """A pidfd for the sandbox's pid 1 (bwrap's `--info-fd` report), while bwrap still holds it unreaped."""
    if proc.returncode is not None:
        return None  # bwrap reaped its pid 1 before exiting: the namespace is already gone
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(info), 1.0)
    if not info.done() or info.cancelled():
        return None
    try:
        child = int(json.loads(info.result() or b"{}").get("child-pid") or 0)
    except (ValueError, AttributeError):
        return None
    if child <= 0 or proc.returncode is not None:
        return None
    try:
        return os.pidfd_open(child)
    except ProcessLookupError:
        return None


async def _wait_readable(fd: int, timeout_s: float) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def on_ready() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, on_ready)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ready, timeout_s)
    finally:
        loop.remove_reader(fd)


async def kill_uid(uid: int) -> None:
    """Kill every process of `uid` (kill(-1) from a helper running as that uid): what escaped the group."""
    code = "import os\ntry:\n    os.kill(-1, 9)\nexcept OSError:\n    pass"
    with contextlib.suppress(OSError):
        helper = await asyncio.create_subprocess_exec(
            *(sys.executable, "-I", "-c", code),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            user=uid,
            group=uid,
            extra_groups=[],
            env={},
            cwd="/",
        )
        await helper.wait()


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
