"""Where the Letta contract lives: `../shared` next to the repository root (openapi.json, response samples).

Every test that reads the contract imports its paths from here. A missing `../shared` is an error, never a skip:
tests that compare memlet with Letta must not pass by not running.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
LETTA = SHARED / "letta"
SAMPLES = LETTA / "samples"
OPENAPI = LETTA / "openapi.json"

for _required in (SAMPLES, OPENAPI):
    if not _required.exists():
        raise RuntimeError(
            f"{_required} is missing: memlet's tests compare responses with Letta's contract, which must be checked "
            f"out as {SHARED} (the directory next to the repository root {ROOT})."
        )
