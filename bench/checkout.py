"""Benchmarks of single calls that compare checkouts: `--root DIR` imports memlet from another checkout (e.g. a
worktree of an older commit), while the bench's own helpers and the mock LLM stay this checkout's; `per_call` times
one call.

Import this module before memlet, and call `use_root` before the first memlet import.
"""

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parser(doc: str, calls: int) -> argparse.ArgumentParser:
    """`--calls` (default `calls`) and `--root`, with the script's first docstring line as its description."""
    made = argparse.ArgumentParser(description=doc.splitlines()[0])
    made.add_argument("--calls", type=int, default=calls)
    made.add_argument("--root", type=Path, default=ROOT, help="the checkout whose memlet to import")
    return made


def use_root(args: argparse.Namespace) -> None:
    """Put `args.root` first on the import path (memlet then comes from there)."""
    sys.path.insert(0, str(args.root.resolve()))


async def per_call(call: Callable[[], Awaitable[object]], calls: int) -> tuple[float, float]:
    """(µs of this process's CPU, ms of wall time) per call, after a few warm-up calls."""
    for _ in range(5):
        await call()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.process_time() - cpu) / calls * 1e6, (time.perf_counter() - wall) / calls * 1e3
