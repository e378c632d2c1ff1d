"""Benchmarks that compare checkouts: `--root DIR` imports memlet from another checkout (e.g. a worktree of an older
commit), while the bench's own helpers and the mock LLM stay this checkout's.

Import this module before memlet, and call `use_root` before the first memlet import.
"""

import argparse
import sys
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
