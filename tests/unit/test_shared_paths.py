"""Tests find Letta's contract in `../shared` from the repository root, and fail loudly when it is not there."""

import runpy
import shutil
from pathlib import Path

import pytest

from tests import shared_paths


def test_paths_are_next_to_the_repository_root() -> None:
    root = Path(__file__).resolve().parents[2]
    assert root.parent / "shared" == shared_paths.SHARED
    assert shared_paths.SAMPLES.is_dir() and shared_paths.OPENAPI.is_file()


def test_a_checkout_without_shared_fails_instead_of_skipping(tmp_path: Path) -> None:
    copy = tmp_path / "memlet" / "tests" / "shared_paths.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(shared_paths.__file__, copy)
    with pytest.raises(RuntimeError, match=r"shared/letta/samples is missing"):
        runpy.run_path(str(copy))
