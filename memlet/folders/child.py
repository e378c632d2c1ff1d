"""Run one `memlet/folders/file_worker.py` job in a child process under `ChildLimits`; its failures are ParseErrors."""

import asyncio
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import memlet
from memlet.folders import file_worker


class ParseError(Exception):
    """The file's text could not be extracted or split; the message becomes the file's error_message."""


@dataclass(frozen=True)
class ChildLimits:
    """What one child job may take: its address space, and CPU time (also the parent's wall-clock wait)."""

    memory_mb: int = 1024
    seconds: int = 300


async def run_in_child(job: str, data: bytes, limits: ChildLimits) -> bytes:
    """`file_worker`'s answer to `job` on `data` (stdin), or a ParseError saying why there is none."""
    args = [sys.executable, "-m", "memlet.folders.file_worker", job, str(limits.memory_mb), str(limits.seconds)]
    # The child sees no server settings or keys: only where Python finds memlet.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(Path(memlet.__file__).parent.parent)}
    child = await asyncio.create_subprocess_exec(
        *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(data), timeout=limits.seconds + 5)
    except TimeoutError:
        raise ParseError(f"Could not read the file: it took longer than {limits.seconds} s") from None
    finally:
        if child.returncode is None:  # timed out or cancelled (server stopping): leave no child behind
            child.kill()
            await child.wait()
    if child.returncode == 0:
        return out
    message = err.decode("utf-8", errors="replace")
    if child.returncode == file_worker.EXIT_UNREADABLE:
        raise ParseError(message or "Could not read the file")
    if child.returncode == file_worker.EXIT_TOO_LARGE:
        raise ParseError(f"Could not read the file: it needs more than {limits.memory_mb} MB of memory")
    logging.getLogger(__name__).warning("file worker %s exited with %s: %s", job, child.returncode, message[-500:])
    raise ParseError(f"Could not read the file: its reader stopped (exit {child.returncode}; time or memory limit)")
