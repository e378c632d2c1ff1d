"""A sandboxed call's own pipes (its result channel, and under bubblewrap its info channel) are each closed exactly
once, under uvloop (uvicorn's loop, so memlet's server loop) as under asyncio's own loop.

uvloop's `connect_read_pipe` closes a pipe's descriptor in libuv and then again through the file object it was given
(MagicStack/uvloop#763): a number handed to another thread in between (a Postgres connection, a client's socket, a
test's event loop) was closed under it. The probes below see a close of a descriptor that is already closed."""

import asyncio
import io
import os
from collections.abc import Callable
from typing import Any

import pytest
import uvloop

from memlet.tool_exec import process
from memlet.tool_exec.sandbox import run_tool

SOURCE = "def f(text: str):\n    print('to stdout')\n    return text * 3\n"


class _ProbedFile(io.FileIO):
    """A file object that notes when the descriptor it closes was already closed by someone else."""

    closed_twice: list[int]

    def close(self) -> None:
        if not self.closed:
            try:
                os.fstat(self.fileno())
            except OSError:
                self.closed_twice.append(self.fileno())
        super().close()


def _probe(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every close of a pipe descriptor by the sandbox's process code, checked first: the numbers it found closed."""
    closed_twice: list[int] = []
    real_close = os.close

    def close(fd: int) -> None:
        try:
            os.fstat(fd)
        except OSError:
            closed_twice.append(fd)
        real_close(fd)

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> io.FileIO:
        probed = _ProbedFile(fd, "rb")
        probed.closed_twice = closed_twice
        return probed

    monkeypatch.setattr(process.os, "close", close)
    monkeypatch.setattr(process.os, "fdopen", fdopen)
    return closed_twice


@pytest.mark.parametrize("loop_factory", [uvloop.new_event_loop, asyncio.new_event_loop], ids=["uvloop", "asyncio"])
def test_each_pipe_descriptor_is_closed_once(
    monkeypatch: pytest.MonkeyPatch, loop_factory: Callable[[], asyncio.AbstractEventLoop]
) -> None:
    closed_twice = _probe(monkeypatch)

    async def calls() -> list[Any]:
        return [await run_tool(SOURCE, "f", {"text": f"call {n} "}) for n in range(5)]

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        results = runner.run(calls())
    assert [r.func_return for r in results] == [f"call {n} " * 3 for n in range(5)]
    assert [r.stdout for r in results] == [["to stdout\n"]] * 5
    assert closed_twice == []
