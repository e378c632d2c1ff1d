"""The openapi-coverage measure: how many of Letta 0.16.8's OSS operations memlet serves, with Letta's method and path.

    .venv/bin/python bench/openapi_coverage.py

Reads `../shared/letta/oss-operations.json` (the 224 operations) and memlet's own OpenAPI document, built from the
app without starting it. An operation counts when memlet serves the same method on the same path (parameter names
aside) under the same operationId. Prints the count and every operation that is missing or differs.
"""

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OSS_OPERATIONS = ROOT.parent / "shared" / "letta" / "oss-operations.json"


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path).rstrip("/")


def served_routes(spec: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(METHOD, path shape) → operationId, from an OpenAPI document."""
    return {
        (method.upper(), _shape(path)): op.get("operationId", "")
        for path, item in spec.get("paths", {}).items()
        for method, op in item.items()
        if isinstance(op, dict)
    }


def coverage(spec: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Letta's operations, and a line for each one memlet lacks or serves under another operationId."""
    operations: list[dict[str, Any]] = json.loads(OSS_OPERATIONS.read_text())
    served = served_routes(spec)
    gaps = []
    for op in operations:
        ours = served.get((op["method"], _shape(op["path"])))
        if ours is None:
            gaps.append(f"missing  {op['method']} {op['path']} ({op['operationId']})")
        elif ours != op["operationId"]:
            gaps.append(f"renamed  {op['method']} {op['path']}: memlet {ours!r}, Letta {op['operationId']!r}")
    return operations, gaps


def memlet_spec() -> dict[str, Any]:
    from memlet.app import create_app
    from memlet.config import Settings

    return create_app(Settings()).openapi()


def main() -> None:
    operations, gaps = coverage(memlet_spec())
    print(f"openapi-coverage: {len(operations) - len(gaps)} of {len(operations)} Letta 0.16.8 OSS operations served")
    for line in gaps:
        print("  " + line)


if __name__ == "__main__":
    main()
