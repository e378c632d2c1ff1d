"""The package layers of ARCHITECTURE.md hold: `lint-imports` checks the contracts in pyproject.toml."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports() -> str:
    found = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert found, "import-linter is a dev dependency (make dev installs it)"
    return found


def test_packages_import_only_downward() -> None:
    result = subprocess.run([_lint_imports()], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Packages import only downward KEPT" in result.stdout
